module example.com/broken

go 1.22

require example.invalid/missing v1.0.0
