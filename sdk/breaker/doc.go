// Package breaker is Ratchet's built-in circuit breaker: a count-based
// breaker per service with the spec's semantics, and Strategy, the
// spi.ResilienceStrategy over one breaker per service name.
//
// A Breaker is CLOSED while the service looks healthy: every counted call
// (a success, or an error its filter records) goes into a ring buffer of
// the latest SlidingWindowSize calls, and once MinimumCalls are in it and
// the share of failures reaches FailureRateThreshold, it opens. OPEN
// refuses every call, until WaitDuration has passed: then it is HALF_OPEN,
// and lets PermittedCallsInHalfOpen trial calls through (no more at once);
// when all of them have counted, it closes (a fresh window) or, if their
// failure rate reaches the threshold, opens again. Errors the filter
// ignores, or neither records nor ignores, count as neither success nor
// failure, and a trial call that ends so gives its permit back (the
// filter rules are spi.ErrorFilter.Classify's). A call admitted in one
// state that ends in another (a slow call admitted while CLOSED that
// returns once the breaker opened) is not counted.
//
// State is per process: each node keeps its own breakers, which see the
// calls of that node only.
package breaker
