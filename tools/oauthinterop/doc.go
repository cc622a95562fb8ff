// Package oauthinterop checks that the OAuth client libraries partners use
// work against the whole system with no workaround: golang.org/x/oauth2 from
// Go, and openid-client, jose and oauth4webapi from npm (pinned in
// package-lock.json, run by interop.mjs). Its test is part of make test.
package oauthinterop
