module partnerapi.dev/services/contracts

go 1.26.0
