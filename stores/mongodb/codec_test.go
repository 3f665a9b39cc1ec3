package mongodb

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

func TestTimeRoundTrip(t *testing.T) {
	for _, tm := range []time.Time{
		{},
		time.Date(2030, 1, 1, 0, 0, 0, 123456000, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 999999000, time.UTC),
		time.Date(2030, 1, 1, 1, 0, 0, 0, time.FixedZone("x", 3600)),
	} {
		got := usTime(timeUS(tm))
		assert.True(t, got.Equal(tm), "%s -> %s", tm, got)
		if !tm.IsZero() {
			assert.Equal(t, time.UTC, got.Location())
		}
	}
	assert.True(t, usTime(timeUS(time.Time{})).IsZero())
	assert.Nil(t, optTimeUS(time.Time{}))
}

func TestPropEntry(t *testing.T) {
	for _, kv := range [][2]string{{"k", "v"}, {"a:b", "c:d"}, {"", ""}, {"12:x", "ü"}, {"k", ""}} {
		e := propEntry(kv[0], kv[1])
		k, v, ok := parsePropEntry(e)
		require.True(t, ok, e)
		assert.Equal(t, kv[0], k)
		assert.Equal(t, kv[1], v)
	}
	assert.NotEqual(t, propEntry("ab", "c"), propEntry("a", "bc"), "entries of different splits differ")
	for _, bad := range []string{"", "x", "5:ab", "-1:a"} {
		_, _, ok := parsePropEntry(bad)
		assert.False(t, ok, bad)
	}
}

func TestPermitKey(t *testing.T) {
	id := uuid.Must(uuid.NewV7())
	k := permitKey(id, 42)
	gid, seq, ok := parsePermitKey(k)
	require.True(t, ok)
	assert.Equal(t, id, gid)
	assert.EqualValues(t, 42, seq)
	assert.NotContains(t, k, ".")
	for _, bad := range []string{"", "xyz-1", "00-1", uuid.Nil.String() + "-1", "00112233445566778899aabbccddeeff-x"} {
		_, _, ok := parsePermitKey(bad)
		assert.False(t, ok, bad)
	}
}

func TestStateKey(t *testing.T) {
	assert.Equal(t, "n612e6224", stateKey("a.b$"))
	assert.NotEqual(t, stateKey("a"), stateKey("b"))
	assert.Equal(t, "n", stateKey(""))
}

func TestJobRoundTrip(t *testing.T) {
	j := &spi.Job{
		ID: uuid.Must(uuid.NewV7()), TaskName: "t", Payload: []byte{}, Status: spi.StatusRunning,
		Priority: spi.PriorityHigh, ScheduledAt: time.Date(2030, 1, 1, 0, 0, 0, 1000, time.UTC),
		CreatedAt: time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC), Attempts: 2, MaxRetries: 5,
		Backoff: spi.BackoffExponential, BackoffParam: 1500 * time.Microsecond, IdempotencyKey: "k",
		Tags: []string{"a", "b", "a"}, Params: map[string]string{"x": "y"}, Resource: "R", ResourceLimit: 2,
	}
	raw, err := bson.Marshal(encodeJob(j))
	require.NoError(t, err)
	got, err := decodeJob(raw)
	require.NoError(t, err)
	assert.Equal(t, spi.StatusPending, got.Status, "inserted jobs are PENDING")
	assert.Equal(t, []byte{}, got.Payload, "an empty payload stays empty, not nil")
	assert.Nil(t, got.Result)
	assert.Equal(t, []string{"a", "b"}, got.Tags)
	assert.True(t, got.ScheduledAt.Equal(j.ScheduledAt))
	assert.Equal(t, j.BackoffParam, got.BackoffParam)
	assert.Equal(t, j.Params, got.Params)
	assert.Equal(t, 2, got.ResourceLimit)
}

func TestParamsWithDottedKeys(t *testing.T) {
	for _, params := range []map[string]string{
		{spi.BatchParam: "01b8dac5-b7e9-724b-8202-248c7217ec20", "plain": "v"},
		{"$x": "a", "": "empty key"},
		{"nul\x00": "b"},
	} {
		j := &spi.Job{ID: uuid.Must(uuid.NewV7()), TaskName: "t", Params: params}
		d := encodeJob(j)
		assert.Nil(t, d.Params, "a key that cannot be a field name puts the params in the list")
		raw, err := bson.Marshal(d)
		require.NoError(t, err)
		got, err := decodeJob(raw)
		require.NoError(t, err)
		assert.Equal(t, params, got.Params)
	}
	d := encodeJob(&spi.Job{ID: uuid.Must(uuid.NewV7()), Params: map[string]string{"a": "b"}})
	assert.Nil(t, d.ParamList, "plain keys stay fields of params")
}

func TestDecodeCorrupt(t *testing.T) {
	id := uuid.Must(uuid.NewV7())
	good := func() bson.M {
		return bson.M{"_id": idValue(id), "task_name": "t", "status": "PENDING", "priority": int32(2), "scheduled_time": int64(0), "created_time": int64(0)}
	}
	for name, mod := range map[string]func(bson.M){
		"params":   func(d bson.M) { d["params"] = "{not json" },
		"pl":       func(d bson.M) { d["pl"] = bson.A{"9:short"} },
		"status":   func(d bson.M) { d["status"] = "LOST" },
		"priority": func(d bson.M) { d["priority"] = int32(9) },
		"time":     func(d bson.M) { d["scheduled_time"] = "soon" },
	} {
		d := good()
		mod(d)
		raw, err := bson.Marshal(d)
		require.NoError(t, err)
		_, err = decodeJob(raw)
		assert.ErrorIs(t, err, spi.ErrCorruptJob, name)
		assert.ErrorContains(t, err, id.String(), name)
	}
	raw, err := bson.Marshal(bson.M{"_id": "not-a-uuid", "status": "PENDING"})
	require.NoError(t, err)
	_, err = decodeJob(raw)
	assert.ErrorIs(t, err, spi.ErrCorruptJob)
}

func TestIDOrder(t *testing.T) {
	a := uuid.MustParse("01000000-0000-7000-8000-000000000000")
	b := uuid.MustParse("ff000000-0000-7000-8000-000000000000")
	// BSON orders binaries by length, subtype, then bytes: all ids have
	// the same length and subtype, so the byte order decides.
	assert.Equal(t, len(idValue(a).Data), len(idValue(b).Data))
	assert.Equal(t, idValue(a).Subtype, idValue(b).Subtype)
	assert.Less(t, string(idValue(a).Data), string(idValue(b).Data))
}

func TestTagQuery(t *testing.T) {
	assert.Empty(t, tagQuery(spi.TagFilter{}))
	q := tagQuery(spi.TagFilter{All: []string{"a"}, Any: []string{"b", "c"}, None: []string{"d"}})
	assert.Equal(t, bson.A{
		bson.M{"tags": bson.M{"$all": bson.A{"a"}}},
		bson.M{"tags": bson.M{"$in": bson.A{"b", "c"}}},
		bson.M{"tags": bson.M{"$nin": bson.A{"d"}}},
	}, q)
}

func TestSignalRoundTrip(t *testing.T) {
	deadline := time.Date(2030, 1, 1, 0, 0, 0, 123456000, time.UTC)
	j := &spi.Job{ID: uuid.Must(uuid.NewV7()), TaskName: "t", Signal: &spi.SignalWait{
		Name: "approve", Key: "order-1", Deadline: deadline,
		Outcome: spi.SignalDelivered, Payload: []byte("forged"), ResolvedAt: deadline,
	}}
	d := encodeJob(j)
	assert.Equal(t, string(spi.StatusWaiting), d.Status, "a job with a signal wait is inserted WAITING")
	require.NotNil(t, d.Signal)
	assert.Equal(t, sigWaitKey("order-1", "approve"), d.Signal.WaitKey, "an unresolved wait with a key is indexed by key and name")
	require.NotNil(t, d.Signal.Due, "an unresolved wait with a deadline is indexed by it")
	raw, err := bson.Marshal(d)
	require.NoError(t, err)
	got, err := decodeJob(raw)
	require.NoError(t, err)
	require.NotNil(t, got.Signal)
	assert.Equal(t, spi.StatusWaiting, got.Status)
	assert.Equal(t, "approve", got.Signal.Name)
	assert.Equal(t, "order-1", got.Signal.Key)
	assert.True(t, deadline.Equal(got.Signal.Deadline))
	assert.Empty(t, got.Signal.Outcome, "an insert ignores the outcome fields")
	assert.Nil(t, got.Signal.Payload)
	assert.True(t, got.Signal.ResolvedAt.IsZero())

	open := encodeJob(&spi.Job{ID: uuid.Must(uuid.NewV7()), TaskName: "t", Signal: &spi.SignalWait{Name: "x"}})
	assert.Empty(t, open.Signal.WaitKey, "a wait without a key is not indexed by key")
	assert.Nil(t, open.Signal.Due, "a wait without a deadline is not indexed by deadline")
	assert.Nil(t, encodeJob(&spi.Job{ID: uuid.Must(uuid.NewV7()), TaskName: "t"}).Signal)

	bad, err := bson.Marshal(&jobDoc{ID: idValue(j.ID), Status: string(spi.StatusPending), Signal: &sigDoc{Name: "x", Outcome: "MAYBE"}})
	require.NoError(t, err)
	_, err = decodeJob(bad)
	assert.ErrorIs(t, err, spi.ErrCorruptJob, "an unknown signal outcome is a corrupt job")
}
