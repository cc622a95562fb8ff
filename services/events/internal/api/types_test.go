package api_test

import "partnerapi.dev/pkg/httpx"

// The webhook answers as the tests read them (the views of webhooks.go).
type (
	endpoint struct {
		ID                      string   `json:"id"`
		URL                     string   `json:"url"`
		EventTypes              []string `json:"eventTypes"`
		Disabled                bool     `json:"disabled"`
		PreviousSecretExpiresAt *string  `json:"previousSecretExpiresAt"`
	}

	// endpointAnswer is a create's, an update's or a rotation's answer;
	// only a create and a rotation show the secret.
	endpointAnswer struct {
		Endpoint endpoint `json:"endpoint"`
		Secret   string   `json:"secret"`
		Replayed bool     `json:"replayed"`
	}

	deliveryView struct {
		ID        string `json:"id"`
		EventID   string `json:"eventId"`
		EventType string `json:"eventType"`
		Seq       int64  `json:"seq"`
		Status    string `json:"status"`
	}

	// deliveryAnswer is a test event's or a retry's answer.
	deliveryAnswer struct {
		Delivery deliveryView `json:"delivery"`
		Replayed bool         `json:"replayed"`
	}

	deliveriesPage struct {
		Deliveries []deliveryView `json:"deliveries"`
		NextBefore *string        `json:"nextBefore"`
	}

	replayAnswer struct {
		Enqueued int64 `json:"enqueued"`
		LastSeq  int64 `json:"lastSeq"`
		HasMore  bool  `json:"hasMore"`
		Replayed bool  `json:"replayed"`
	}

	// cursorExpired is the feed's 410: the error envelope and where the
	// kept events start.
	cursorExpired struct {
		httpx.Envelope
		OldestSeq int64 `json:"oldestSeq"`
	}
)

// Write bodies as the document gives them; the tests send partial (PATCH,
// replay) and deliberately wrong bodies as maps.
type (
	createBody struct {
		URL            string   `json:"url"`
		EventTypes     []string `json:"eventTypes"`
		IdempotencyKey string   `json:"idempotencyKey"`
	}

	// keyed is the body of a write that names nothing but its key.
	keyed struct {
		IdempotencyKey string `json:"idempotencyKey"`
	}
)
