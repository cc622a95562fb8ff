package partnerclient

// The client is what a partner gets by pointing oapi-codegen at the served
// document. It is generated, not tracked (make partner-client, which make
// test and make lint run first); the end-to-end test calls the running
// system through it, and apicheck fails when it is older than the document.
//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -generate types,client -package partnerclient -o client.gen.go ../../pkg/apispec/openapi.json
