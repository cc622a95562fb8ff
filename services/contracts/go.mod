module partnerapi.dev/services/contracts

go 1.26.0

require partnerapi.dev/pkg v0.0.0

replace partnerapi.dev/pkg => ../../pkg
