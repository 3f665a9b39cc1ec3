package ferrettest_test

import (
	"context"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tcmongodb "github.com/testcontainers/testcontainers-go/modules/mongodb"

	"github.com/ratchet-go/ratchet/tck"
)

// MongoImage is the image of the real MongoDB that TestConformanceMongoDB
// starts when a Docker engine answers: the oldest supported series.
const MongoImage = "mongo:6.0"

// TestConformanceMongoDB certifies the store against a real MongoDB in a
// container (testcontainers-go), when a Docker engine is available.
func TestConformanceMongoDB(t *testing.T) {
	testcontainers.SkipIfProviderIsNotHealthy(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := tcmongodb.Run(ctx, MongoImage)
	if err != nil {
		t.Fatalf("start %s: %v", MongoImage, err)
	}
	t.Cleanup(func() { _ = testcontainers.TerminateContainer(c) })
	uri, err := c.ConnectionString(ctx)
	if err != nil {
		t.Fatalf("connection string: %v", err)
	}
	tck.Run(t, harness(t, uri, "tck"))
}
