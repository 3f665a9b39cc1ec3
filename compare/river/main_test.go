package main

import (
	"fmt"
	"testing"
)

// Job i of a batch gets kind i mod kinds and, with more than one
// priority, priority (i mod priorities) mod 4 + 1; the options of one
// priority are shared.
func TestBatchParams(t *testing.T) {
	for _, tc := range []struct {
		kinds, priorities int
		want              []string // kind@priority of jobs 0..6 (0: River's default)
	}{
		{1, 1, []string{"noop@0", "noop@0", "noop@0", "noop@0", "noop@0", "noop@0", "noop@0"}},
		{10, 5, []string{"noop0@1", "noop1@2", "noop2@3", "noop3@4", "noop4@1", "noop5@1", "noop6@2"}},
		{3, 1, []string{"noop0@0", "noop1@0", "noop2@0", "noop0@0", "noop1@0", "noop2@0", "noop0@0"}},
		{1, 2, []string{"noop@1", "noop@2", "noop@1", "noop@2", "noop@1", "noop@2", "noop@1"}},
	} {
		params := batchParams(settings{kinds: tc.kinds, priorities: tc.priorities}, 7)
		for i, p := range params {
			prio := 0
			if p.InsertOpts != nil {
				prio = p.InsertOpts.Priority
			}
			if got := fmt.Sprintf("%s@%d", p.Args.Kind(), prio); got != tc.want[i] {
				t.Errorf("kinds %d, priorities %d: job %d is %s, want %s", tc.kinds, tc.priorities, i, got, tc.want[i])
			}
		}
		if tc.priorities > 1 && params[0].InsertOpts != params[tc.priorities].InsertOpts {
			t.Errorf("kinds %d, priorities %d: the options of a priority are not shared", tc.kinds, tc.priorities)
		}
	}
}

func TestSettingsCheck(t *testing.T) {
	ok := settings{jobs: 1, workers: 1, batch: 1, kinds: 10, priorities: 5}
	if err := ok.check(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []settings{
		{jobs: 1, workers: 1, batch: 1, kinds: 11, priorities: 1},
		{jobs: 1, workers: 1, batch: 1, kinds: 0, priorities: 1},
		{jobs: 1, workers: 1, batch: 1, kinds: 1, priorities: 0},
		{jobs: 0, workers: 1, batch: 1, kinds: 1, priorities: 1},
	} {
		if err := bad.check(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
