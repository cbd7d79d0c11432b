# a typo on line 2
    vaddd.f16 x1, x2, x3, x4
    end
