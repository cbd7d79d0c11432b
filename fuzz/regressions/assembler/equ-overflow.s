.equ A, 0x7fffffffffffffff + 1
end
