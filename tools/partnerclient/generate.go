package partnerclient

// The client is what a partner gets by pointing oapi-codegen at the served
// document. It is generated, not committed: make partner-client writes it,
// and make test, test-short, test-one, test-cluster and lint run that first.
// The end-to-end test calls the running system through it; apicheck fails
// when it is older than the document.
//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -generate types,client -package partnerclient -o client.gen.go ../../pkg/apispec/openapi.json
