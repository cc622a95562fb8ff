// Package webhookverify checks the events service's webhook signatures with
// an implementation we did not write: the standardwebhooks npm package
// (pinned in package-lock.json, run by verify.mjs). The events service's
// delivery tests feed it the requests their receiver got.
package webhookverify
