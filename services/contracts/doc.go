// Package contracts declares, once, what crosses a process boundary inside
// the system: the grant view identity gives the gateway, the scopes of the
// API, and the records the POS side and the demo seed send to the services'
// ingestion and import endpoints. Producers and consumers import these types
// instead of declaring their own, so a change to the wire is a change to one
// file that every side compiles against.
package contracts
