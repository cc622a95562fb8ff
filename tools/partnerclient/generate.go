package partnerclient

// The client is what a partner gets by pointing oapi-codegen at the served
// document. It is generated (make partner-client) and committed so that a
// clone builds; the end-to-end test calls the running system through it, and
// make gen-check and apicheck fail when it is older than the document.
//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -generate types,client -package partnerclient -o client.gen.go ../../pkg/apispec/openapi.json
