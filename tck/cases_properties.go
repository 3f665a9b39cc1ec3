package tck

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// props returns the case's store as a JobPropertyStore, or skips the case.
func (f *fixture) props() spi.JobPropertyStore {
	f.t.Helper()
	return capability[spi.JobPropertyStore](f, "spi.JobPropertyStore")
}

// putProperty writes one property, failing the case on an error.
func (f *fixture) putProperty(ps spi.JobPropertyStore, u uuid.UUID, key, value string) {
	f.t.Helper()
	require.NoError(f.t, ps.PutProperty(f.ctx, u, key, value), "PutProperty(%s, %q, %q)", u, key, value)
}

// assertProperty checks job u's property key.
func (f *fixture) assertProperty(ps spi.JobPropertyStore, u uuid.UUID, key, want string, what string) {
	f.t.Helper()
	v, ok, err := ps.GetProperty(f.ctx, u, key)
	if assert.NoError(f.t, err, "%s: GetProperty(%q)", what, key) && assert.True(f.t, ok, "%s: property %q must exist", what, key) {
		assert.Equal(f.t, want, v, "%s: property %q", what, key)
	}
}

// byPrefix runs GetPropertiesByPrefix, failing the case on an error.
func (f *fixture) byPrefix(ps spi.JobPropertyStore, u uuid.UUID, prefix string) map[string]string {
	f.t.Helper()
	m, err := ps.GetPropertiesByPrefix(f.ctx, u, prefix)
	require.NoError(f.t, err, "GetPropertiesByPrefix(%s, %q)", u, prefix)
	return m
}

// findJobs runs FindJobsByProperty, failing the case on an error.
func (f *fixture) findJobs(ps spi.JobPropertyStore, key, value string, limit int) []uuid.UUID {
	f.t.Helper()
	us, err := ps.FindJobsByProperty(f.ctx, key, value, limit)
	require.NoError(f.t, err, "FindJobsByProperty(%q, %q, %d)", key, value, limit)
	return us
}

func propertyCases() []testCase {
	return []testCase{
		{"WrittenWithTheJob", func(t tb, f *fixture) {
			ps := f.props()
			a := f.newJob(withProps(map[string]string{"tenant": "acme", "order": "A-1"}))
			b := f.newJob()
			c := f.newJob(withKey("k-props"), withProps(map[string]string{"tenant": "globex"}))
			f.insert(a, b, c)
			f.assertProperty(ps, a.ID, "tenant", "acme", "a property given with InsertJobs")
			f.assertProperty(ps, a.ID, "order", "A-1", "a second property given with InsertJobs")
			f.assertProperty(ps, c.ID, "tenant", "globex", "a keyed job's property")
			assert.Empty(t, f.byPrefix(ps, b.ID, ""), "a job inserted without properties has none")
			assert.ErrorIs(t, ps.PutProperty(f.ctx, a.ID, "tenant", "initech"), spi.ErrPropertyExists, "a property written at insert is write-once")
			assert.Nil(t, f.get(a.ID).Properties, "job reads do not load properties")

			dup := f.newJob(withKey("k-props"), withProps(map[string]string{"tenant": "initech", "extra": "x"}))
			res, err := f.s.InsertJobs(f.ctx, cloneJobs([]*spi.Job{dup}), spi.InsertOptions{})
			require.NoError(t, err)
			require.Equal(t, []spi.InsertResult{{ID: c.ID, Duplicate: true}}, res)
			assert.Equal(t, map[string]string{"tenant": "globex"}, f.byPrefix(ps, c.ID, ""), "a duplicate's properties are not written, not even onto the job holding its key")
			assert.Empty(t, f.findJobs(ps, "tenant", "initech", 10), "nothing holds a duplicate's property")

			// Enough properties for several statements or a bulk path.
			many := make([]*spi.Job, 300)
			for i := range many {
				many[i] = f.newJob(withProps(map[string]string{"batch": "b-300", "n": fmt.Sprint(i)}))
			}
			f.insert(many...)
			assert.Len(t, f.findJobs(ps, "batch", "b-300", 1000), 300, "every job of a large insert has its properties")
			f.assertProperty(ps, many[299].ID, "n", "299", "the last job of a large insert")

			good, bad := f.newJob(), f.newJob(withProps(map[string]string{"": "no key"}))
			_, err = f.s.InsertJobs(f.ctx, cloneJobs([]*spi.Job{good, bad}), spi.InsertOptions{})
			assert.Error(t, err, "a property with an empty key is refused")
			for _, j := range []*spi.Job{good, bad} {
				_, err = f.s.GetJob(f.ctx, j.ID)
				assert.ErrorIs(t, err, spi.ErrNotFound, "a refused batch writes nothing")
			}
		}},
		{"ListJobsByProperty", func(t tb, f *fixture) {
			ps := f.props()
			jobs := f.insertN(5)
			for i, tenant := range []string{"acme", "globex", "acme", "", "acme"} {
				if tenant != "" {
					f.putProperty(ps, jobs[i].ID, "tenant", tenant)
				}
			}
			f.putProperty(ps, jobs[3].ID, "region", "acme")
			got, _ := f.list(spi.ListParams{PropertyKey: "tenant", PropertyValue: "acme"})
			assert.Equal(t, ids([]*spi.Job{jobs[0], jobs[2], jobs[4]}), ids(got), "ListJobs(PropertyKey tenant = acme): not another key's value")
			page, next := f.list(spi.ListParams{PropertyKey: "tenant", PropertyValue: "acme", Limit: 2})
			assert.Equal(t, ids([]*spi.Job{jobs[0], jobs[2]}), ids(page), "a page of the property filter")
			page, _ = f.list(spi.ListParams{PropertyKey: "tenant", PropertyValue: "acme", After: next})
			assert.Equal(t, ids([]*spi.Job{jobs[4]}), ids(page), "the next page of the property filter")
			got, _ = f.list(spi.ListParams{PropertyKey: "tenant", PropertyValue: "acme", Status: spi.StatusFailed})
			assert.Empty(t, got, "the property filter combines with the status")
			got, _ = f.list(spi.ListParams{PropertyKey: "tenant", PropertyValue: "initech"})
			assert.Empty(t, got, "a value no job has")
		}},
		{"PutGet", func(t tb, f *fixture) {
			ps := f.props()
			j := f.insertOne()
			f.putProperty(ps, j.ID, "order", "A-1001")
			f.putProperty(ps, j.ID, "kunde/ü", "Zoë 🚀 漢字 'x' \"y\" %_")
			f.assertProperty(ps, j.ID, "order", "A-1001", "after PutProperty")
			f.assertProperty(ps, j.ID, "kunde/ü", "Zoë 🚀 漢字 'x' \"y\" %_", "non-ASCII key and value")
			v, ok, err := ps.GetProperty(f.ctx, j.ID, "missing")
			require.NoError(t, err, "GetProperty of a key never written")
			assert.False(t, ok, "GetProperty of a key never written")
			assert.Empty(t, v)
			other := f.insertOne()
			_, ok, err = ps.GetProperty(f.ctx, other.ID, "order")
			require.NoError(t, err)
			assert.False(t, ok, "properties belong to their job")
		}},
		{"WriteOnce", func(t tb, f *fixture) {
			ps := f.props()
			j := f.insertOne()
			f.putProperty(ps, j.ID, "tenant", "acme")
			assert.NoError(t, ps.PutProperty(f.ctx, j.ID, "tenant", "acme"), "writing the same value again is harmless")
			err := ps.PutProperty(f.ctx, j.ID, "tenant", "globex")
			assert.ErrorIs(t, err, spi.ErrPropertyExists, "writing another value must fail wrapping spi.ErrPropertyExists")
			f.assertProperty(ps, j.ID, "tenant", "acme", "after a rejected overwrite")
			err = ps.PutProperty(f.ctx, j.ID, "tenant", "")
			assert.ErrorIs(t, err, spi.ErrPropertyExists, "writing an empty value over a set one must fail wrapping spi.ErrPropertyExists")
			f.assertProperty(ps, j.ID, "tenant", "acme", "after a rejected overwrite with an empty value")
			// Any state of the job: properties outlive the run.
			c := f.claimOne(j.ID, "node-a", at(time.Second))
			require.Equal(t, []bool{true}, f.complete(succeeded(c, at(2*time.Second), nil, "")))
			f.putProperty(ps, j.ID, "invoice", "INV-7")
			f.assertProperty(ps, j.ID, "invoice", "INV-7", "a property of a SUCCEEDED job")
			f.assertProperty(ps, j.ID, "tenant", "acme", "a property survives the job's completion")
		}},
		{"Prefix", func(t tb, f *fixture) {
			ps := f.props()
			j := f.insertOne()
			other := f.insertOne()
			all := map[string]string{
				"a.x": "1", "a.y": "2", "ab": "3", "b.a": "4", "A.x": "5", "a": "6",
				"a%": "7", "a%b": "8", "a_": "9", "aZ": "10", "a.x.deep": "11", "ä.x": "12",
			}
			for k, v := range all {
				f.putProperty(ps, j.ID, k, v)
			}
			f.putProperty(ps, other.ID, "a.z", "other job")
			sub := func(keys ...string) map[string]string {
				m := map[string]string{}
				for _, k := range keys {
					m[k] = all[k]
				}
				return m
			}
			for prefix, want := range map[string]map[string]string{
				"":      all,
				"a.":    sub("a.x", "a.y", "a.x.deep"),
				"a.x":   sub("a.x", "a.x.deep"),
				"a":     sub("a.x", "a.y", "ab", "a", "a%", "a%b", "a_", "aZ", "a.x.deep"),
				"A":     sub("A.x"),
				"a%":    sub("a%", "a%b"),
				"a_":    sub("a_"),
				"ä":     sub("ä.x"),
				"b.a":   sub("b.a"),
				"zzz":   {},
				"a.x.d": sub("a.x.deep"),
			} {
				got := f.byPrefix(ps, j.ID, prefix)
				if len(want) == 0 {
					assert.Empty(t, got, "GetPropertiesByPrefix(%q): no key starts with it", prefix)
					continue
				}
				assert.Equal(t, want, got, "GetPropertiesByPrefix(%q): exactly the keys starting with it (no case folding or wildcards)", prefix)
			}
			assert.Empty(t, f.byPrefix(ps, f.insertOne().ID, ""), "a job without properties")
		}},
		{"FindJobs", func(t tb, f *fixture) {
			ps := f.props()
			var match []*spi.Job
			for range 6 {
				match = append(match, f.newJob())
			}
			others := []*spi.Job{f.newJob(), f.newJob(), f.newJob()}
			f.insert(shuffled(append(append([]*spi.Job{}, match...), others...))...)
			for _, j := range shuffled(match) {
				f.putProperty(ps, j.ID, "order", "A-1")
			}
			f.putProperty(ps, others[0].ID, "order", "A-2")
			f.putProperty(ps, others[1].ID, "order", "A-1x")
			f.putProperty(ps, others[2].ID, "other-key", "A-1")
			// Jobs in several states all count.
			cs := f.claim("node-a", 2, at(time.Second), 0)
			require.Len(t, cs, 2)
			require.Equal(t, []bool{true}, f.complete(succeeded(cs[0], at(2*time.Second), nil, "")))
			want := ids(match)
			sortUUIDs(want)
			assert.Equal(t, want, f.findJobs(ps, "order", "A-1", 100), "FindJobsByProperty: the matching ids, ascending")
			assert.Equal(t, want[:4], f.findJobs(ps, "order", "A-1", 4), "FindJobsByProperty with limit 4: the first 4 ids")
			assert.Equal(t, want[:1], f.findJobs(ps, "order", "A-1", 1), "FindJobsByProperty with limit 1")
			assert.Equal(t, []uuid.UUID{others[0].ID}, f.findJobs(ps, "order", "A-2", 100), "another value")
			assert.Empty(t, f.findJobs(ps, "order", "A-", 100), "values match exactly, not by prefix")
			assert.Empty(t, f.findJobs(ps, "order", "a-1", 100), "values match exactly, case included")
			assert.Empty(t, f.findJobs(ps, "missing", "A-1", 100), "unknown key")
		}},
		{"UnknownJob", func(t tb, f *fixture) {
			ps := f.props()
			f.insertOne()
			u := id(993)
			assert.ErrorIs(t, ps.PutProperty(f.ctx, u, "k", "v"), spi.ErrNotFound, "PutProperty of an unknown job")
			_, _, err := ps.GetProperty(f.ctx, u, "k")
			assert.ErrorIs(t, err, spi.ErrNotFound, "GetProperty of an unknown job")
			_, err = ps.GetPropertiesByPrefix(f.ctx, u, "")
			assert.ErrorIs(t, err, spi.ErrNotFound, "GetPropertiesByPrefix of an unknown job")
			assert.Empty(t, f.findJobs(ps, "k", "v", 10), fmt.Sprintf("FindJobsByProperty after the failed write to %s", u))
		}},
	}
}
