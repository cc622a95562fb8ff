module partnerapi.dev/gateway

go 1.26
