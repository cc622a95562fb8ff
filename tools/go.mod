module partnerapi.dev/tools

go 1.26
