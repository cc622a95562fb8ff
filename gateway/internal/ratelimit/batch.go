package ratelimit

import "context"

// Counts of one key that arrive together share Redis calls. While a count
// of a key is on its way to Redis on this replica, the next counts of that
// key wait together in a batch; when the call lands, the batch goes in one
// call (carried by its first member), and counts arriving meanwhile form
// the next batch. A partner sending many requests at once so costs Redis
// one call per round trip instead of one per request, at the price of at
// most one round trip of waiting. allow gives every member of a batch the
// decision it would get if the members had come one after another, so the
// count stays exact.
const maxFlights = 1

// flight is the state of one key with counts on their way.
type flight struct {
	n     int    // calls on their way
	queue *batch // counts waiting for a call to land, nil if none
}

// batch is counts of one key that go to Redis in one call.
type batch struct {
	n     int           // members; fixed once start is closed
	start chan struct{} // closed when the batch may go
	done  chan struct{} // closed when ds is filled
	ds    []Decision    // decision of each member, in order
}

// count counts one request for key under p, in a batch when a count of key
// is already on its way.
func (l *Limiter) count(ctx context.Context, p Policy, key string) Decision {
	k := policyKey{p.Name, key}
	l.flightMu.Lock()
	f := l.flights[k]
	if f == nil {
		f = &flight{}
		l.flights[k] = f
	}
	if f.queue == nil && f.n < maxFlights {
		f.n++
		l.flightMu.Unlock()
		d := l.Allow(ctx, p, key)
		l.land(k)
		return d
	}
	b := f.queue
	if b == nil {
		b = &batch{start: make(chan struct{}), done: make(chan struct{})}
		f.queue = b
	}
	i := b.n
	b.n++
	l.flightMu.Unlock()
	if i > 0 {
		<-b.done
		return b.ds[i]
	}
	<-b.start
	b.ds = make([]Decision, b.n)
	// The call decides for every member: the first one's cancellation
	// must not turn it into a failure (and a fallback) for the others.
	l.allow(context.WithoutCancel(ctx), p, key, b.ds)
	close(b.done)
	l.land(k)
	return b.ds[0]
}

// land ends a call of key k: a waiting batch takes its place, or the key has
// one call fewer on its way.
func (l *Limiter) land(k policyKey) {
	l.flightMu.Lock()
	defer l.flightMu.Unlock()
	f := l.flights[k]
	if b := f.queue; b != nil {
		f.queue = nil
		close(b.start)
		return
	}
	if f.n--; f.n == 0 {
		delete(l.flights, k)
	}
}
