module partnerapi.dev/services/identity

go 1.26
