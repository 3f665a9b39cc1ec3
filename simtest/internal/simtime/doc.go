// Package simtime formats simulated time the one way that the test
// environment's event log and the simulator's trace both print it.
package simtime
