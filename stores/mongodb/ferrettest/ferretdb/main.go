package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}

func run() error {
	dir := flag.String("dir", "", "directory of the SQLite files, one per database (required)")
	listen := flag.String("listen", "127.0.0.1:0", "TCP address to listen on")
	logLevel := flag.String("log", "error", "FerretDB log level: debug, info, warn or error (to standard error)")
	flag.Parse()
	if *dir == "" {
		return errors.New("-dir is required")
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return fmt.Errorf("-dir %s is not a directory", abs)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("-log: %w", err)
	}
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen},
		Logger:    slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
		Handler:   "sqlite",
		SQLiteURL: (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs) + "/"}).String(),
	})
	if err != nil {
		return fmt.Errorf("start FerretDB: %w", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		// The parent holds our standard input open while it wants us.
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()

	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	fmt.Printf("ready %s\n", f.MongoDBURI()) // MongoDBURI waits for the listener
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("FerretDB: %w", err)
	}
	return nil
}
