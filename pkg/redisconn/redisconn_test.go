package redisconn

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestOpenNamesEachTopology(t *testing.T) {
	for _, c := range []struct {
		url     string
		cluster bool
	}{
		{"redis://127.0.0.1:6379/0", false},
		{"redis://:secret@127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002", true},
		{"redis://:secret@127.0.0.1:26379?master_name=partnerapi&addr=127.0.0.1:26380", false},
	} {
		rdb, err := Open(c.url)
		if err != nil {
			t.Fatalf("%s: %v", c.url, err)
		}
		if _, ok := rdb.(*redis.ClusterClient); ok != c.cluster {
			t.Errorf("%s: %T", c.url, rdb)
		}
		_ = rdb.Close()
	}
}

func TestOpenRefusesWithoutRepeatingTheURL(t *testing.T) {
	for _, u := range []string{
		"http://:hunter2@127.0.0.1:6379",
		"redis://:hunter2@127.0.0.1:7000?addr=127.0.0.1:7001&bogus=1",
		"redis://:hunter2@127.0.0.1:26379?master_name=x&bogus=1",
		"redis://:hunter2@127.0.0.1:6379/notanumber",
	} {
		_, err := Open(u)
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: %v", u, err)
		}
	}
}
