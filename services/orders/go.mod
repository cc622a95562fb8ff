module partnerapi.dev/services/orders

go 1.26
