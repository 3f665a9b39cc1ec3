// Package jobjson is the JSON form of a job that the operator tools write:
// the ratchet command's --json and the dashboard's JSON API, one shape for
// both.
package jobjson
