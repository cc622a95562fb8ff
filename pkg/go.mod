module partnerapi.dev/pkg

go 1.26
