package tck

import (
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// raceInserts inserts each of jobs in an InsertJobs of its own, all at
// once, spread over the store's handles (two when Harness.Reopen gives
// one), and returns each one's result, failing the case on an error.
func (f *fixture) raceInserts(t tb, jobs []*spi.Job) []spi.InsertResult {
	handles := f.handles()
	res := make([]spi.InsertResult, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w, j := range jobs {
		s := handles[w%len(handles)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r, err := s.InsertJobs(f.ctx, []*spi.Job{j}, spi.InsertOptions{})
			if err == nil && len(r) != 1 {
				err = fmt.Errorf("%d results for 1 job", len(r))
			}
			errs[w] = err
			if err == nil {
				res[w] = r[0]
			}
		}()
	}
	close(start)
	wg.Wait()
	for w, err := range errs {
		require.NoError(t, err, "writer %d", w)
	}
	return res
}

// keyRaceCase is the Idempotency case of writers racing on one key.
func keyRaceCase() testCase {
	return testCase{"OneKeyRace", func(t tb, f *fixture) {
		// Writers race to insert one idempotency key: one job is written
		// and every writer gets its id.
		const writers = 8
		for round := range 3 {
			jobs := make([]*spi.Job, writers)
			for w := range jobs {
				jobs[w] = f.newJob(withKey(fmt.Sprint("race-", round)))
			}
			res := f.raceInserts(t, jobs)
			winners := 0
			for w := range writers {
				if !res[w].Duplicate {
					winners++
				}
				assert.Equal(t, res[0].ID, res[w].ID, "round %d: every writer gets the one job's id", round)
			}
			assert.Equal(t, 1, winners, "round %d: exactly one writer wrote the job", round)
		}
	}}
}

func concurrencyCases() []testCase {
	return []testCase{
		{"ExclusiveClaims", func(t tb, f *fixture) {
			// 500 due jobs; Concurrency goroutines, each a node of its own,
			// claim batches of 7 until nothing is left: every job is claimed
			// exactly once, by the node the store says owns it.
			const total, batch = 500, 7
			var jobs []*spi.Job
			for i := range total {
				jobs = append(jobs, f.newJob(
					withPriority(spi.Priority(i%spi.NumPriorities)),
					withDue(at(time.Duration(i%50)*time.Second)),
				))
			}
			for i := 0; i < total; i += 100 {
				f.insert(jobs[i : i+100]...)
			}
			now := at(time.Hour)

			type claimed struct {
				node string
				job  *spi.Job
			}
			var (
				mu   sync.Mutex
				got  []claimed
				errs []string
				wg   sync.WaitGroup
			)
			n := f.h.concurrency
			for g := range n {
				node := fmt.Sprintf("tck-node-%02d", g)
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() {
						if r := recover(); r != nil {
							mu.Lock()
							errs = append(errs, fmt.Sprintf("%s: ClaimJobs panicked: %v", node, r))
							mu.Unlock()
						}
					}()
					// Bounded: a store that hands out jobs twice would
					// otherwise never run dry.
					for range 2 * total {
						js, err := f.s.ClaimJobs(f.ctx, spi.ClaimParams{NodeID: node, Limit: batch, Now: now, BoostInterval: boost})
						mu.Lock()
						if err != nil {
							errs = append(errs, fmt.Sprintf("%s: ClaimJobs: %v", node, err))
						}
						if len(js) > batch {
							errs = append(errs, fmt.Sprintf("%s: ClaimJobs returned %d jobs, limit %d", node, len(js), batch))
						}
						for _, j := range js {
							got = append(got, claimed{node, j})
						}
						stop := err != nil || len(js) == 0 || len(got) > 2*total
						mu.Unlock()
						if stop {
							return
						}
					}
				}()
			}
			wg.Wait()
			for _, e := range errs {
				t.Errorf("%s", e)
			}

			owner := map[uuid.UUID]string{}
			dups := 0
			for _, c := range got {
				if c.job == nil {
					t.Errorf("ClaimJobs returned a nil job")
					continue
				}
				if prev, ok := owner[c.job.ID]; ok {
					if dups < 10 {
						t.Errorf("job %s claimed twice: by %s and by %s", c.job.ID, prev, c.node)
					}
					dups++
					continue
				}
				owner[c.job.ID] = c.node
				if c.job.OwnerNode != c.node || c.job.Status != spi.StatusRunning || c.job.ClaimSeq != 1 {
					t.Errorf("job %s returned to %s as %s owned by %q with ClaimSeq %d; want RUNNING, owned by the claimer, ClaimSeq 1",
						c.job.ID, c.node, c.job.Status, c.job.OwnerNode, c.job.ClaimSeq)
				}
			}
			assert.Zero(t, dups, "jobs handed out more than once")
			assert.Len(t, owner, total, "distinct jobs claimed")
			assert.Len(t, got, total, "jobs handed out in all")
			for _, j := range jobs {
				node, ok := owner[j.ID]
				if !assert.True(t, ok, "job %s was never claimed", j.ID) {
					continue
				}
				st := f.get(j.ID)
				if st.Status != spi.StatusRunning || st.OwnerNode != node || st.ClaimSeq != 1 {
					t.Errorf("stored job %s is %s owned by %q with ClaimSeq %d; it was handed to %s once (want RUNNING, ClaimSeq 1)",
						j.ID, st.Status, st.OwnerNode, st.ClaimSeq, node)
				}
			}
			require.Empty(t, f.claim("tck-node-late", 100, now.Add(time.Hour), boost), "nothing is left to claim")
		}},
	}
}
