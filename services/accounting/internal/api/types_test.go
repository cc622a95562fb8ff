package api_test

import (
	"encoding/json"
)

// The answers and event payloads as the tests read them (the wire shapes of
// internal/domain's views).
type (
	// rateAmounts is an amount per VAT rate category.
	rateAmounts map[string]int64

	row struct {
		Key              string      `json:"key"`
		Label            string      `json:"label"`
		TransactionCount int64       `json:"transactionCount"`
		GrossMinor       int64       `json:"grossMinor"`
		NetMinor         int64       `json:"netMinor"`
		VatMinor         int64       `json:"vatMinor"`
		GrossByRateMinor rateAmounts `json:"grossByRateMinor"`
		VatByRateMinor   rateAmounts `json:"vatByRateMinor"`
	}

	period struct {
		StartDate    string `json:"startDate"`
		EndDate      string `json:"endDate"`
		TimeZone     string `json:"timeZone"`
		DayStartHour int64  `json:"dayStartHour"`
	}

	refundReporting struct {
		Policy             string `json:"policy"`
		LegacyTiming       bool   `json:"legacyTiming"`
		IncompleteEvidence bool   `json:"incompleteEvidence"`
	}

	warning struct {
		Code         string  `json:"code"`
		Message      string  `json:"message"`
		BusinessDate *string `json:"businessDate"`
		CorrectionID *string `json:"correctionId"`
	}

	reportDay struct {
		BusinessDate     string `json:"businessDate"`
		TransactionCount int64  `json:"transactionCount"`
		RawTotalMinor    int64  `json:"rawTotalMinor"`
		CorrectionCount  int64  `json:"correctionCount"`
	}

	correction struct {
		CorrectionID         string  `json:"correctionId"`
		BatchID              string  `json:"batchId"`
		RevisionID           string  `json:"revisionId"`
		Action               string  `json:"action"`
		UndoneByCorrectionID *string `json:"undoneByCorrectionId"`
	}

	paymentSource struct {
		SourceKind     string `json:"sourceKind"`
		SourceRecordID string `json:"sourceRecordId"`
		SourceKey      string `json:"sourceKey"`
		GrossMinor     int64  `json:"grossMinor"`
	}

	// report is a payment report; adjustedRows and adjustedTotalMinor are
	// null unless it is ready.
	report struct {
		RefundReporting          refundReporting `json:"refundReporting"`
		Period                   period          `json:"period"`
		RawRows                  []row           `json:"rawRows"`
		AdjustedRows             []row           `json:"adjustedRows"`
		RawTotalMinor            int64           `json:"rawTotalMinor"`
		AdjustedTotalMinor       *int64          `json:"adjustedTotalMinor"`
		Status                   string          `json:"status"`
		Warnings                 []warning       `json:"warnings"`
		Days                     []reportDay     `json:"days"`
		Corrections              []correction    `json:"corrections"`
		Sources                  []paymentSource `json:"sources"`
		AppliedCorrectionIDs     []string        `json:"appliedCorrectionIds"`
		RawSourceBasis           string          `json:"rawSourceBasis"`
		CurrentSourceFingerprint *string         `json:"currentSourceFingerprint"`
		ReadOnly                 bool            `json:"readOnly"`
	}

	workspace struct {
		Report  report          `json:"report"`
		Sources []paymentSource `json:"sources"`
		Methods []struct {
			Key   string `json:"key"`
			Label string `json:"label"`
		} `json:"methods"`
		CanWrite bool `json:"canWrite"`
	}

	// preview is a correction preview; input is the body it echoes, which
	// an apply or undo repeats (writeBody).
	preview struct {
		Input              json.RawMessage `json:"input"`
		ExpectedRevisionID string          `json:"expectedRevisionId"`
		PreviewFingerprint string          `json:"previewFingerprint"`
		ExpiresAt          string          `json:"expiresAt"`
		Before             report          `json:"before"`
		After              report          `json:"after"`
	}

	// result is an apply's or undo's answer.
	result struct {
		BatchID    string `json:"batchId"`
		RevisionID string `json:"revisionId"`
		Replayed   bool   `json:"replayed"`
		Report     report `json:"report"`
	}

	accountingImpact struct {
		GrossMinor     int64       `json:"grossMinor"`
		NetMinor       int64       `json:"netMinor"`
		VatMinor       int64       `json:"vatMinor"`
		VatByRateMinor rateAmounts `json:"vatByRateMinor"`
	}

	// refundEvent is a refund event as the refunds page shows it and
	// refund_event.recorded carries it.
	refundEvent struct {
		RefundID             string  `json:"refundId"`
		RefundBusinessDate   string  `json:"refundBusinessDate"`
		OccurredAt           string  `json:"occurredAt"`
		Kind                 string  `json:"kind"`
		OrderID              *string `json:"orderId"`
		OriginalBusinessDate *string `json:"originalBusinessDate"`
		MethodKey            string  `json:"methodKey"`
		AmountMinor          int64   `json:"amountMinor"`
		ReturnedLines        []struct {
			LineID        string  `json:"lineId"`
			CatalogItemID *string `json:"catalogItemId"`
			Name          string  `json:"name"`
			QuantityDelta float64 `json:"quantityDelta"`
		} `json:"returnedLines"`
		AccountingImpact *accountingImpact `json:"accountingImpact"`
	}

	refundPage struct {
		Policy             string        `json:"policy"`
		Events             []refundEvent `json:"events"`
		NextCursor         *string       `json:"nextCursor"`
		Truncated          bool          `json:"truncated"`
		LegacyTiming       bool          `json:"legacyTiming"`
		IncompleteEvidence bool          `json:"incompleteEvidence"`
	}

	summary struct {
		Sales struct {
			TransactionCount int64 `json:"transactionCount"`
			GrossMinor       int64 `json:"grossMinor"`
			NetMinor         int64 `json:"netMinor"`
			VatMinor         int64 `json:"vatMinor"`
			ByRate           []struct {
				Category   string `json:"category"`
				GrossMinor int64  `json:"grossMinor"`
				NetMinor   int64  `json:"netMinor"`
				VatMinor   int64  `json:"vatMinor"`
			} `json:"byRate"`
		} `json:"sales"`
		DiscountsMinor int64 `json:"discountsMinor"`
		TipsMinor      int64 `json:"tipsMinor"`
		Refunds        struct {
			Count                    int64             `json:"count"`
			AmountMinor              int64             `json:"amountMinor"`
			GrossMinor               int64             `json:"grossMinor"`
			NonSaleReturnAmountMinor int64             `json:"nonSaleReturnAmountMinor"`
			Days                     []json.RawMessage `json:"days"`
		} `json:"refunds"`
	}

	// correctionEvent is what payment_correction.applied and .undone carry.
	correctionEvent struct {
		RestaurantID   string `json:"restaurantId"`
		BatchID        string `json:"batchId"`
		RevisionID     string `json:"revisionId"`
		BusinessDate   string `json:"businessDate"`
		SourceKind     string `json:"sourceKind"`
		SourceRecordID string `json:"sourceRecordId"`
	}
)

// deref is *p, or the zero value when p is nil.
func deref[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}
