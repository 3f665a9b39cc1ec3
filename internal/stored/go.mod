module github.com/ratchet-go/ratchet/internal/stored

go 1.26.0
