// Package spi holds the service-provider interfaces of Ratchet: the contracts
// that stores, retry policies, serializers, error sanitizers and metrics
// collectors implement, and the value types those contracts exchange.
//
// The central one is [Store]. A store persists jobs and implements the state
// machine of docs/architecture.md: atomic claims that advance a claim sequence, owner
// writes fenced by that sequence, retries, the dead-letter queue and orphan
// recovery. Every method that depends on time takes the current time as an
// argument, so stores never read a clock of their own; the engine and the
// client pass in the time of their injected clock.
//
// Application code rarely imports this package directly: the public API in
// package ratchet (the module root) re-exports the value types users need.
// Store authors implement [Store] and certify it with the tck module.
package spi
