package password

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestHashVerify(t *testing.T) {
	ctx := context.Background()
	h, err := Hash(ctx, "s3cret-password")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := Verify(ctx, h, "s3cret-password"); !ok || err != nil {
		t.Fatalf("right password: %v %v", ok, err)
	}
	if ok, _ := Verify(ctx, h, "wrong"); ok {
		t.Fatal("wrong password accepted")
	}
	if h2, _ := Hash(ctx, "s3cret-password"); h2 == h {
		t.Fatal("salt not random")
	}
	if _, err := Verify(ctx, "$2a$10$bcrypt", "x"); err == nil {
		t.Fatal("foreign hash accepted")
	}
}

// TestHashesWaitForASlot: with every slot taken, a verification waits, gives
// up when its context ends, and runs once a slot is free.
func TestHashesWaitForASlot(t *testing.T) {
	h, err := Hash(context.Background(), "s3cret-password")
	if err != nil {
		t.Fatal(err)
	}
	for range cap(slots) {
		slots <- struct{}{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Verify(ctx, h, "s3cret-password"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("verification with every slot taken: %v, want it to wait until its deadline", err)
	}
	done := make(chan bool)
	go func() {
		ok, _ := Verify(context.Background(), h, "s3cret-password")
		done <- ok
	}()
	select {
	case <-done:
		t.Fatal("a verification ran with every slot taken")
	case <-time.After(50 * time.Millisecond):
	}
	<-slots
	if !<-done {
		t.Fatal("the verification that waited for a slot refused the right password")
	}
	for range cap(slots) - 1 {
		<-slots
	}
}
