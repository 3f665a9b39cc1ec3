package sqlserver

import "testing"

// nopT is a testing.TB that ignores everything, for fakes used outside a
// test's checks.
type nopT struct{ testing.TB }

func (nopT) Helper()               {}
func (nopT) Errorf(string, ...any) {}
func (nopT) Fatalf(string, ...any) {}
func (nopT) Logf(string, ...any)   {}
