package secretscan

import "testing"

func BenchmarkNew(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := New(); err != nil {
			b.Fatal(err)
		}
	}
}
func BenchmarkRedact(b *testing.B) {
	s, _ := New()
	t := `{"rule":"wrap errors with %w","applies_to":["lmdbstore/**"],"note":"decided after the incident of 2026-11-01, see run 42"}`
	for i := 0; i < b.N; i++ {
		s.Redact(t)
	}
}
