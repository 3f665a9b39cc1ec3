package ferrettest_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/mongodb"
	"github.com/ratchet-go/ratchet/stores/mongodb/ferrettest"
	"github.com/ratchet-go/ratchet/tck"
)

// URIEnv names the environment variable with the URI of a real MongoDB
// deployment to certify the store against as well.
const URIEnv = "RATCHET_TEST_MONGODB_URI"

var dbSeq atomic.Int64

// freshDB returns a database name that no other test of this process uses.
func freshDB(prefix string) string {
	return fmt.Sprintf("%s_%d_%d", prefix, os.Getpid()%100000, dbSeq.Add(1))
}

// The ferretdb command, built once per test process by
// ferretBinary into binDir (which TestMain removes) as binPath, or binErr.
var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	binErr    error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// ferretBinary returns the ferretdb command, building it at the first call.
func ferretBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "ferrettest-"); binErr != nil {
			return
		}
		binPath, binErr = ferrettest.Build(context.Background(), binDir)
	})
	if binErr != nil {
		t.Fatalf("%v", binErr)
	}
	return binPath
}

// startFerret runs a FerretDB server process for the calling test.
func startFerret(t *testing.T) *ferrettest.Server {
	t.Helper()
	return startFerretWith(t, ferrettest.Options{})
}

// startFerretWith runs a FerretDB server process with opts (Binary and Dir
// filled in) for the calling test; its log goes to the test's log.
func startFerretWith(t *testing.T, opts ferrettest.Options) *ferrettest.Server {
	t.Helper()
	opts.Binary = ferretBinary(t)
	opts.Dir = t.TempDir()
	opts.Log = testLog{t}
	srv, err := ferrettest.Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("start FerretDB: %v", err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// testLog writes to a test's log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Logf("ferretdb: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// connect returns a client of uri, disconnected at cleanup.
func connect(t *testing.T, uri string) *mongo.Client {
	t.Helper()
	c, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatalf("connect %s: %v", uri, err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return c
}

// harness certifies the store on the server at uri: every case in a fresh
// database of its own, opened with New on a shared client (Reopen opens a
// second store with a client of its own, as another process would), and a
// Corrupt hook that makes the job's params a string instead of a
// sub-document.
func harness(t *testing.T, uri, prefix string) tck.Harness {
	client := connect(t, uri)
	return tck.Harness{
		Open: func(t *testing.T) spi.Store {
			db := freshDB(prefix)
			s, err := mongodb.New(t.Context(), client, mongodb.Options{Database: db})
			if err != nil {
				t.Fatalf("new store on %s: %v", db, err)
			}
			t.Cleanup(func() { _ = client.Database(db).Drop(context.Background()) })
			return s
		},
		Reopen: func(t *testing.T, s spi.Store) spi.Store {
			ms := s.(*mongodb.Store)
			o, err := mongodb.Open(t.Context(), uri, mongodb.Options{Database: ms.Database().Name(), CollectionPrefix: ms.CollectionPrefix()})
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			return o
		},
		Corrupt: corruptParams,
	}
}

// corruptParams makes the params of job id a string instead of a
// sub-document.
func corruptParams(t *testing.T, s spi.Store, id uuid.UUID) {
	r, err := s.(*mongodb.Store).Jobs().UpdateOne(context.Background(),
		bson.M{"_id": bson.Binary{Subtype: bson.TypeBinaryUUID, Data: id[:]}},
		bson.M{"$set": bson.M{"params": "{not json"}})
	if err != nil {
		t.Fatalf("corrupt job %s: %v", id, err)
	}
	if r.MatchedCount != 1 {
		t.Fatalf("corrupt job %s: %d documents matched", id, r.MatchedCount)
	}
}

// ferretHarness is harness for an embedded FerretDB, where every store gets
// an endpoint of its own, so that BreakConnections cuts the connections of
// that store's client only.
func ferretHarness(t *testing.T, srv *ferrettest.Server) tck.Harness {
	h := harness(t, srv.URI(), "tck")
	admin := connect(t, srv.URI())
	var endpoints sync.Map // spi.Store -> *ferrettest.Endpoint
	h.Open = func(t *testing.T) spi.Store {
		ep, err := srv.NewEndpoint()
		if err != nil {
			t.Fatalf("endpoint: %v", err)
		}
		t.Cleanup(ep.Close)
		db := freshDB("tck")
		s, err := mongodb.Open(t.Context(), ep.URI(), mongodb.Options{Database: db})
		if err != nil {
			t.Fatalf("open store on %s: %v", db, err)
		}
		endpoints.Store(spi.Store(s), ep)
		t.Cleanup(func() {
			endpoints.Delete(spi.Store(s))
			_ = admin.Database(db).Drop(context.Background())
		})
		return s
	}
	h.BreakConnections = func(t *testing.T, s spi.Store) {
		ep, ok := endpoints.Load(s)
		if !ok {
			t.Fatalf("BreakConnections: unknown store")
		}
		ep.(*ferrettest.Endpoint).BreakConnections()
	}
	return h
}

// TestConformanceFerretDB certifies the store against FerretDB 1.24
// (SQLite handler) embedded in this process, behind the serializing proxy.
func TestConformanceFerretDB(t *testing.T) {
	srv := startFerret(t)
	start := time.Now()
	tck.Run(t, ferretHarness(t, srv))
	t.Logf("conformance on FerretDB: %s", time.Since(start).Round(time.Millisecond))
}

// TestConformanceURI certifies the store against the MongoDB deployment
// named by RATCHET_TEST_MONGODB_URI, when it is set.
func TestConformanceURI(t *testing.T) {
	uri := os.Getenv(URIEnv)
	if uri == "" {
		t.Skipf("%s is not set", URIEnv)
	}
	tck.Run(t, harness(t, uri, "ratchet_tck"))
}
