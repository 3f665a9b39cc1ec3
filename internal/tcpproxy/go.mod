module github.com/ratchet-go/ratchet/internal/tcpproxy

go 1.26.0
