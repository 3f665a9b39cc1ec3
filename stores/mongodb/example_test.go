package mongodb_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/ratchet-go/ratchet/stores/mongodb"
)

// Open connects with a client that the store owns; the database is the
// URI's ("jobs" here) unless Options.Database names another.
func ExampleOpen() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := mongodb.Open(ctx, "mongodb://127.0.0.1:27017/jobs", mongodb.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	fmt.Println(s.Database().Name(), s.Jobs().Name())
}

// New uses a client that the application owns, for example one shared with
// its own collections; Close leaves it connected.
func ExampleNew() {
	ctx := context.Background()
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://127.0.0.1:27017"))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Disconnect(ctx)
	s, err := mongodb.New(ctx, client, mongodb.Options{Database: "app", CollectionPrefix: "ratchet_"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
}
