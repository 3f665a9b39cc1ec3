package ferrettest

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// buildOpMsg builds an OP_MSG with a document sequence (kind 1) before its body
// (kind 0), as drivers send inserts.
func buildOpMsg(t *testing.T, body bson.D, withSequence bool) []byte {
	t.Helper()
	msg := make([]byte, headerLen+4)
	binary.LittleEndian.PutUint32(msg[12:16], opMsg)
	if withSequence {
		doc, err := bson.Marshal(bson.D{{Key: "x", Value: 1}})
		require.NoError(t, err)
		id := append([]byte("documents"), 0)
		seq := make([]byte, 5)
		seq[0] = 1
		binary.LittleEndian.PutUint32(seq[1:], uint32(4+len(id)+len(doc)))
		msg = append(append(append(msg, seq...), id...), doc...)
	}
	b, err := bson.Marshal(body)
	require.NoError(t, err)
	msg = append(append(msg, 0), b...)
	binary.LittleEndian.PutUint32(msg[0:4], uint32(len(msg)))
	return msg
}

func TestDatabaseOfRequest(t *testing.T) {
	assert.Equal(t, "jobs_1", database(buildOpMsg(t, bson.D{{Key: "find", Value: "c"}, {Key: "$db", Value: "jobs_1"}}, false)))
	assert.Equal(t, "jobs_2", database(buildOpMsg(t, bson.D{{Key: "insert", Value: "c"}, {Key: "$db", Value: "jobs_2"}}, true)),
		"the body after a document sequence")
	assert.Equal(t, "", database(buildOpMsg(t, bson.D{{Key: "ping", Value: 1}}, false)), "no $db")
	assert.Equal(t, "", database([]byte{1, 2, 3}), "too short")
	legacy := buildOpMsg(t, bson.D{{Key: "$db", Value: "x"}}, false)
	binary.LittleEndian.PutUint32(legacy[12:16], 2004) // OP_QUERY
	assert.Equal(t, "", database(legacy), "not an OP_MSG")
	truncated := buildOpMsg(t, bson.D{{Key: "$db", Value: "x"}}, false)
	assert.Equal(t, "", database(truncated[:len(truncated)-3]), "a body cut short")
}

func TestDBLocksOnePerDatabase(t *testing.T) {
	d := newDBLocks()
	assert.Same(t, d.of("a"), d.of("a"))
	assert.NotSame(t, d.of("a"), d.of("b"))
}
