package ferrettest_test

import (
	"context"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/ratchet-go/ratchet/tck"
)

// MongoImage is the image of the real MongoDB that TestConformanceMongoDB
// starts when a Docker engine answers: the oldest supported series.
const MongoImage = "mongo:6.0"

// mongoStartTimeout bounds the start of the MongoDB container.
const mongoStartTimeout = 5 * time.Minute

// TestConformanceMongoDB certifies the store against a real MongoDB in a
// container when a Docker engine is available. It is a generic container of
// testcontainers-go's core (whose version the workspace shares), not its
// MongoDB module, which resolves only to an older core.
func TestConformanceMongoDB(t *testing.T) {
	testcontainers.SkipIfProviderIsNotHealthy(t)
	ctx, cancel := context.WithTimeout(context.Background(), mongoStartTimeout)
	defer cancel()
	c, err := testcontainers.Run(ctx, MongoImage,
		testcontainers.WithExposedPorts("27017/tcp"),
		testcontainers.WithWaitStrategy(wait.ForAll(
			wait.ForLog("Waiting for connections"),
			wait.ForListeningPort("27017/tcp"),
		).WithDeadline(mongoStartTimeout)),
	)
	if c != nil {
		t.Cleanup(func() { _ = testcontainers.TerminateContainer(c) })
	}
	if err != nil {
		t.Fatalf("start %s: %v", MongoImage, err)
	}
	endpoint, err := c.PortEndpoint(ctx, "27017/tcp", "mongodb")
	if err != nil {
		t.Fatalf("container %s: %v", MongoImage, err)
	}
	tck.Run(t, harness(t, endpoint+"/?directConnection=true", "tck"))
}
