// Package api is the daemon's control API: local HTTP with JSON bodies
// under /v0/, every route behind the bearer token of api.token_file, plus
// /metrics and Go's profiles. Its answers come from a Backend, which the
// daemon implements; the API's JSON types are in package apitype, its
// client in package client.
//
// It imports nothing of the session runtime, the store or the network
// (TestDependencies): what a route answers is the Backend's to say.
package api
