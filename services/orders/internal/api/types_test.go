package api_test

import (
	"encoding/json"

	"partnerapi.dev/services/contracts"
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
		OriginalAmountMinor int64                 `json:"originalAmountMinor"`
		TotalAmountMinor    int64                 `json:"totalAmountMinor"`
		VatMinor            int64                 `json:"vatMinor"`
		RefundAmountMinor   int64                 `json:"refundAmountMinor"`
		DiscountAmountMinor int64                 `json:"discountAmountMinor"`
		Items               []contracts.OrderLine `json:"items"`
		ItemsTruncated      bool                  `json:"itemsTruncated"`
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
