package server_test

import (
	"encoding/base64"
	"sort"
)

var jsonB64 = base64.RawURLEncoding

func sortStrings(s []string) { sort.Strings(s) }
