package api_test

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The orders as the tests read them (the views of views.go).
type (
	// orderSummary is an order as search shows it and its events carry.
	orderSummary struct {
		OrderID               string `json:"orderId"`
		ReceiptHash           string `json:"receiptHash"`
		RestaurantOrderNumber int64  `json:"restaurantOrderNumber"`
		OccurredAt            string `json:"occurredAt"`
		BusinessDate          string `json:"businessDate"`
		OrderType             string `json:"orderType"`
		TableNumber           *int64 `json:"tableNumber"`
		Status                string `json:"status"`
		PaymentMethod         string `json:"paymentMethod"`
		OrderOrigin           struct {
			Kind     string  `json:"kind"`
			Provider *string `json:"provider"`
		} `json:"orderOrigin"`
		OriginalAmountMinor int64       `json:"originalAmountMinor"`
		TotalAmountMinor    int64       `json:"totalAmountMinor"`
		VatMinor            int64       `json:"vatMinor"`
		RefundAmountMinor   int64       `json:"refundAmountMinor"`
		DiscountAmountMinor int64       `json:"discountAmountMinor"`
		Items               []orderLine `json:"items"`
		ItemsTruncated      bool        `json:"itemsTruncated"`
	}

	orderLine struct {
		LineID                 string  `json:"lineId"`
		CatalogItemID          *string `json:"catalogItemId"`
		CatalogItemKind        *string `json:"catalogItemKind"`
		CatalogCategoryID      *string `json:"catalogCategoryId"`
		MenuID                 *string `json:"menuId"`
		Name                   string  `json:"name"`
		Category               *string `json:"category"`
		ItemType               *string `json:"itemType"`
		Quantity               int64   `json:"quantity"`
		UnitPriceMinor         int64   `json:"unitPriceMinor"`
		OriginalUnitPriceMinor *int64  `json:"originalUnitPriceMinor"`
		GrossAmountMinor       int64   `json:"grossAmountMinor"`
		DiscountAmountMinor    int64   `json:"discountAmountMinor"`
		VatAmountMinor         int64   `json:"vatAmountMinor"`
		TaxEvidence            string  `json:"taxEvidence"`
		TaxCountryCode         *string `json:"taxCountryCode"`
		TaxRatesAsOf           *string `json:"taxRatesAsOf"`
		VatRates               []struct {
			Category       string `json:"category"`
			RateBps        int64  `json:"rateBps"`
			VatAmountMinor int64  `json:"vatAmountMinor"`
		} `json:"vatRates"`
		SelectedOptions []struct {
			OptionID         *string `json:"optionId"`
			OptionGroupID    *string `json:"optionGroupId"`
			Name             string  `json:"name"`
			Quantity         int64   `json:"quantity"`
			UnitPriceMinor   int64   `json:"unitPriceMinor"`
			GrossAmountMinor int64   `json:"grossAmountMinor"`
			VatAmountMinor   int64   `json:"vatAmountMinor"`
		} `json:"selectedOptions"`
	}

	// orderDetails is the data of an order's details: the summary's fields
	// and what only the details show.
	orderDetails struct {
		RestaurantID string `json:"restaurantId"`
		Currency     string `json:"currency"`
		Order        struct {
			orderSummary
			RefundedItems []json.RawMessage `json:"refundedItems"`
		} `json:"order"`
	}
)

// strict decodes raw as a T; a field T does not declare fails t, so two
// values compared as Ts are compared whole.
func strict[T any](t testing.TB, raw []byte) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return v
}
