"""Analyses of dync IR that several passes read: what kind of op each op is for memory
(`op_kinds`), each tensor's dims and bytes as sympy expressions (`tensor_sizes`), and sizes
compared over the symbols' ranges (`sampling`)."""
