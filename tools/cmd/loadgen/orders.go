package main

import (
	"context"
	"errors"
)

func runOrders(ctx context.Context, args []string) error { return errors.New("not implemented yet") }
