// Package storetest holds the helpers of a store's own tests, beside
// tck.Run: jobs with the client's defaults and ids in creation order, and
// inserts, reads and claims that fail the test on an error. The cases every
// store must pass are the TCK's; these serve the tests of what is a
// store's own (its statements, plans, faults and options).
package storetest
