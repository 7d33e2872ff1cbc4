module tornado-stm/bench/goserver

go 1.21
