package tck

import (
	"fmt"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// matching returns the jobs whose tags pass filter, by the contract's
// oracle spi.TagFilter.Match.
func matching(jobs []*spi.Job, filter spi.TagFilter) []*spi.Job {
	var out []*spi.Job
	for _, j := range jobs {
		if filter.Match(j.Tags) {
			out = append(out, j)
		}
	}
	return out
}

// tagNames renders the tags of jobs for failure messages.
func tagNames(jobs []*spi.Job) string {
	s := ""
	for _, j := range jobs {
		s += fmt.Sprintf("\n  %s %q", j.ID, j.Tags)
	}
	return s
}

// assertFilterClaims claims everything due at now that passes filter,
// checks that exactly want (a subset of all) is claimed, and releases the
// claimed jobs again so that the next filter sees all of them PENDING.
func (f *fixture) assertFilterClaims(all []*spi.Job, filter spi.TagFilter, now time.Time, what string) {
	f.t.Helper()
	want := matching(all, filter)
	got := f.claimWith(spi.ClaimParams{NodeID: "node-tags", Limit: len(all) + 5, Now: now, Tags: filter})
	assert.ElementsMatch(f.t, ids(want), ids(got), "%s: ClaimJobs with Tags %+v must claim exactly the jobs passing the filter\nwant:%s\ngot:%s",
		what, filter, tagNames(want), tagNames(got))
	refs := make([]spi.ClaimRef, len(got))
	for i, j := range got {
		refs[i] = ref(j)
	}
	if len(refs) > 0 {
		res := f.release(now, refs...)
		for i, ok := range res {
			require.True(f.t, ok, "%s: releasing claimed job %s", what, refs[i].JobID)
		}
	}
}

func tagCases() []testCase {
	return []testCase{
		{"All", func(t tb, f *fixture) {
			jobs := f.insert(shuffled([]*spi.Job{
				f.newJob(withTags("gpu")),
				f.newJob(withTags("gpu", "eu")),
				f.newJob(withTags("eu", "gpu", "big")),
				f.newJob(withTags("eu")),
				f.newJob(),
			})...)
			now := at(time.Minute)
			f.assertFilterClaims(jobs, spi.TagFilter{All: []string{"gpu"}}, now, "All [gpu]")
			f.assertFilterClaims(jobs, spi.TagFilter{All: []string{"gpu", "eu"}}, now, "All [gpu eu]")
			f.assertFilterClaims(jobs, spi.TagFilter{All: []string{"eu", "gpu", "big"}}, now, "All [eu gpu big]")
			f.assertFilterClaims(jobs, spi.TagFilter{All: []string{"missing"}}, now, "All [missing]")
			require.Len(t, matching(jobs, spi.TagFilter{All: []string{"gpu", "eu"}}), 2, "test data")
		}},
		{"Any", func(t tb, f *fixture) {
			jobs := f.insert(shuffled([]*spi.Job{
				f.newJob(withTags("gpu")),
				f.newJob(withTags("eu")),
				f.newJob(withTags("us", "big")),
				f.newJob(withTags("big")),
				f.newJob(),
			})...)
			now := at(time.Minute)
			f.assertFilterClaims(jobs, spi.TagFilter{Any: []string{"gpu", "eu"}}, now, "Any [gpu eu]")
			f.assertFilterClaims(jobs, spi.TagFilter{Any: []string{"us"}}, now, "Any [us]")
			f.assertFilterClaims(jobs, spi.TagFilter{Any: []string{"missing", "big"}}, now, "Any [missing big]")
			f.assertFilterClaims(jobs, spi.TagFilter{Any: []string{"missing"}}, now, "Any [missing]")
		}},
		{"None", func(t tb, f *fixture) {
			jobs := f.insert(shuffled([]*spi.Job{
				f.newJob(withTags("gpu")),
				f.newJob(withTags("gpu", "eu")),
				f.newJob(withTags("eu")),
				f.newJob(),
			})...)
			now := at(time.Minute)
			f.assertFilterClaims(jobs, spi.TagFilter{None: []string{"gpu"}}, now, "None [gpu]")
			f.assertFilterClaims(jobs, spi.TagFilter{None: []string{"gpu", "eu"}}, now, "None [gpu eu]")
			f.assertFilterClaims(jobs, spi.TagFilter{None: []string{"missing"}}, now, "None [missing]")
		}},
		{"UntaggedJobs", func(t tb, f *fixture) {
			// A job without tags passes None (it carries none of them) and
			// the zero filter, and fails All and Any.
			untagged := f.insertOne()
			tagged := f.insertOne(withTags("gpu"))
			now := at(time.Minute)
			all := []*spi.Job{untagged, tagged}
			f.assertFilterClaims(all, spi.TagFilter{None: []string{"gpu"}}, now, "untagged job, None [gpu]")
			f.assertFilterClaims(all, spi.TagFilter{None: []string{"other"}}, now, "untagged job, None [other]")
			f.assertFilterClaims(all, spi.TagFilter{All: []string{"gpu"}}, now, "untagged job, All [gpu]")
			f.assertFilterClaims(all, spi.TagFilter{Any: []string{"gpu"}}, now, "untagged job, Any [gpu]")
			f.assertFilterClaims(all, spi.TagFilter{}, now, "zero filter")
			f.assertFilterClaims(all, spi.TagFilter{All: []string{}, Any: []string{}, None: []string{}}, now, "empty, non-nil filter lists")
			require.Len(t, matching(all, spi.TagFilter{None: []string{"gpu"}}), 1, "test data")
		}},
		{"Combined", func(t tb, f *fixture) {
			// Every subset of {a b c d}, against filters combining the
			// three lists.
			names := []string{"a", "b", "c", "d"}
			var jobs []*spi.Job
			for mask := range 16 {
				var tags []string
				for i, n := range names {
					if mask&(1<<i) != 0 {
						tags = append(tags, n)
					}
				}
				jobs = append(jobs, f.newJob(withTags(tags...)))
			}
			f.insert(shuffled(jobs)...)
			now := at(time.Minute)
			for _, filter := range []spi.TagFilter{
				{All: []string{"a"}, Any: []string{"b", "c"}, None: []string{"d"}},
				{All: []string{"a", "b"}, None: []string{"c"}},
				{Any: []string{"a", "d"}, None: []string{"b", "c"}},
				{All: []string{"c"}, Any: []string{"c"}},
				{All: []string{"a"}, None: []string{"a"}},
				{Any: []string{"b"}, None: []string{"d"}},
			} {
				f.assertFilterClaims(jobs, filter, now, fmt.Sprintf("filter %+v", filter))
			}
			require.Len(t, matching(jobs, spi.TagFilter{All: []string{"a"}, Any: []string{"b", "c"}, None: []string{"d"}}), 3, "test data")
		}},
		{"ExactTags", func(t tb, f *fixture) {
			// Tags match whole and exactly: no case folding, substrings,
			// prefixes, LIKE wildcards or list separators.
			jobs := f.insert(shuffled([]*spi.Job{
				f.newJob(withTags("gpu")),
				f.newJob(withTags("GPU")),
				f.newJob(withTags("gpu-large")),
				f.newJob(withTags("g_u")),
				f.newJob(withTags("gp%")),
				f.newJob(withTags("a", "b")),
				f.newJob(withTags("a,b")),
				f.newJob(withTags(`"q'`, "région-eu")),
			})...)
			now := at(time.Minute)
			for _, filter := range []spi.TagFilter{
				{Any: []string{"gpu"}},
				{Any: []string{"gp"}},
				{Any: []string{"g_u"}},
				{Any: []string{"gp%"}},
				{All: []string{"a,b"}},
				{All: []string{"a", "b"}},
				{Any: []string{`"q'`}},
				{Any: []string{"région"}},
				{None: []string{"gpu", "a"}},
				{None: []string{"g%"}},
			} {
				f.assertFilterClaims(jobs, filter, now, fmt.Sprintf("filter %+v", filter))
			}
		}},
		{"NoHeadOfLineBlocking", func(t tb, f *fixture) {
			// 30 old CRITICAL jobs that fail the filter sit at the top of
			// the order; a claim of 5 takes the 5 matching LOW jobs.
			now := at(10 * time.Hour)
			var other, mine []*spi.Job
			for i := range 30 {
				other = append(other, f.newJob(withPriority(spi.PriorityCritical), withTags("other"), withDue(at(time.Duration(i)*time.Second))))
			}
			for i := range 5 {
				mine = append(mine, f.newJob(withPriority(spi.PriorityLow), withTags("mine"), withDue(now.Add(-time.Duration(i)*time.Second))))
			}
			f.insert(shuffled(append(append([]*spi.Job{}, other...), mine...))...)
			got := f.claimWith(spi.ClaimParams{NodeID: "node-mine", Limit: 5, Now: now, BoostInterval: boost, Tags: spi.TagFilter{All: []string{"mine"}}})
			assert.ElementsMatch(t, ids(mine), ids(got), "jobs failing the filter must be skipped, not block the matching ones behind them")
			got = f.claimWith(spi.ClaimParams{NodeID: "node-mine", Limit: 5, Now: now, BoostInterval: boost, Tags: spi.TagFilter{All: []string{"mine"}}})
			assert.Empty(t, got, "no matching job is left")
			for _, j := range other[:3] {
				assertJob(t, j, f.get(j.ID), "a job failing the filter stays PENDING and unchanged")
			}
			// The same with None: the untagged jobs are claimed.
			var plain []*spi.Job
			for range 5 {
				plain = append(plain, f.newJob(withPriority(spi.PriorityLowest), withDue(now)))
			}
			f.insert(plain...)
			got = f.claimWith(spi.ClaimParams{NodeID: "node-plain", Limit: 5, Now: now, BoostInterval: boost, Tags: spi.TagFilter{None: []string{"other"}}})
			assert.ElementsMatch(t, ids(plain), ids(got), "None [other]: the 30 CRITICAL jobs tagged other must not block the untagged ones")
			got = f.claim("node-any", 100, now, boost)
			assert.ElementsMatch(t, ids(other), ids(got), "without a filter the skipped jobs are claimed")
		}},
		{"FilterAndAging", func(t tb, f *fixture) {
			// Among the jobs passing the filter the claim order is the
			// contract's, aging included; better jobs failing the filter do
			// not count.
			now := at(10 * time.Hour)
			var jobs []*spi.Job
			for i := range 30 {
				p := spi.Priority((i * 2) % spi.NumPriorities)
				wait := time.Duration((i*41)%100) * time.Minute
				tag := "mine"
				if i%3 == 0 {
					tag, p = "other", spi.PriorityCritical
				}
				jobs = append(jobs, f.newJob(withID(id(600-i*5)), withPriority(p), withDue(now.Add(-wait)), withTags(tag, "common")))
			}
			f.insert(shuffled(jobs)...)
			filter := spi.TagFilter{All: []string{"common"}, None: []string{"other"}}
			want := claimOrder(matching(jobs, filter), now, boost)
			first := f.claimWith(spi.ClaimParams{NodeID: "node-a", Limit: 4, Now: now, BoostInterval: boost, Tags: filter})
			assert.ElementsMatch(t, ids(want[:4]), ids(first), "claim of limit 4: the best 4 passing the filter\nwant:%s\ngot:%s",
				describe(want[:4], now, boost), describe(first, now, boost))
			var rest []*spi.Job
			for range len(jobs) {
				c := f.claimWith(spi.ClaimParams{NodeID: "node-a", Limit: 1, Now: now, BoostInterval: boost, Tags: filter})
				if len(c) == 0 {
					break
				}
				rest = append(rest, c...)
			}
			assert.Equal(t, ids(want[4:]), ids(rest), "claims one at a time with a filter follow the contract's order\nwant:%s\ngot:%s",
				describe(want[4:], now, boost), describe(rest, now, boost))
			left := f.claim("node-b", 100, now, boost)
			assert.ElementsMatch(t, ids(matching(jobs, spi.TagFilter{Any: []string{"other"}})), ids(left), "the jobs failing the filter remain")
		}},
	}
}
