module github.com/ratchet-go/ratchet/tools

go 1.26
