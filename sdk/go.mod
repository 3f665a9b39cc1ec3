module github.com/ratchet-go/ratchet/sdk

go 1.26

require github.com/google/uuid v1.6.0
