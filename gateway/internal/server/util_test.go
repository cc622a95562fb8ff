package server_test

import (
	"encoding/base64"
	"sort"

	"partnerapi.dev/gateway/internal/grants"
)

var jsonB64 = base64.RawURLEncoding

type grantsGrant = grants.Grant

func sortStrings(s []string) { sort.Strings(s) }
