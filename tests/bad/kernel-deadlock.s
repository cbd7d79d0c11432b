# V waits for a flag MTE2 never sets.
    waitflag mte2, v, 0
    end
