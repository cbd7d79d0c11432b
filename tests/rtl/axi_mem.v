// SPDX-License-Identifier: MIT
// A test AXI4 slave memory of 2^ADDR_W bytes: INCR, WRAP and FIXED bursts of full-width beats,
// byte strobes, IDs echoed, one read and one write burst at a time. STALL != 0 makes the slave
// hold AWREADY / WREADY / ARREADY low and delay RVALID / BVALID on a pseudo-random pattern
// (back-pressure); BUG selects a deliberate protocol error for the checker's tests:
// 1 = RLAST on the first beat of every burst, 2 = RID one more than ARID, 3 = $fatal on the first
// read (a design that stops the run itself).
module axi_mem #(
    parameter DATA_W = 64,
    parameter ADDR_W = 16,
    parameter ID_W = 4,
    parameter STALL = 0,
    parameter BUG = 0
) (
    input clk,
    input rst_n,
    input [ID_W-1:0] s_axi_awid,
    input [ADDR_W-1:0] s_axi_awaddr,
    input [7:0] s_axi_awlen,
    input [2:0] s_axi_awsize,
    input [1:0] s_axi_awburst,
    input s_axi_awvalid,
    output s_axi_awready,
    input [DATA_W-1:0] s_axi_wdata,
    input [DATA_W/8-1:0] s_axi_wstrb,
    input s_axi_wlast,
    input s_axi_wvalid,
    output s_axi_wready,
    output reg [ID_W-1:0] s_axi_bid,
    output [1:0] s_axi_bresp,
    output reg s_axi_bvalid,
    input s_axi_bready,
    input [ID_W-1:0] s_axi_arid,
    input [ADDR_W-1:0] s_axi_araddr,
    input [7:0] s_axi_arlen,
    input [2:0] s_axi_arsize,
    input [1:0] s_axi_arburst,
    input s_axi_arvalid,
    output s_axi_arready,
    output [ID_W-1:0] s_axi_rid,
    output [DATA_W-1:0] s_axi_rdata,
    output [1:0] s_axi_rresp,
    output s_axi_rlast,
    output reg s_axi_rvalid,
    input s_axi_rready
);
  localparam NB = DATA_W / 8;
  localparam LB = $clog2(NB);
  localparam WORDS = (1 << ADDR_W) / NB;

  reg [DATA_W-1:0] mem[0:WORDS-1];
  reg [15:0] lfsr;
  always @(posedge clk)
    if (!rst_n) lfsr <= 16'hace1;
    else lfsr <= {lfsr[14:0], lfsr[15] ^ lfsr[13] ^ lfsr[12] ^ lfsr[10]};
  wire hold_a = STALL != 0 && lfsr[0];
  wire hold_d = STALL != 0 && lfsr[3];

  // The next beat's address of a burst (AXI4 A3.4.1; beats are full width here).
  function [ADDR_W-1:0] next_addr(input [ADDR_W-1:0] a, input [7:0] len, input [1:0] burst);
    reg [ADDR_W-1:0] mask;
    begin
      mask = ({{(ADDR_W - 8) {1'b0}}, len} + 1) * NB - 1;
      if (burst == 2'd0) next_addr = a;
      else if (burst == 2'd2) next_addr = (a & ~mask) | ((a + NB) & mask);
      else next_addr = a + NB;
    end
  endfunction

  // Writes.
  reg w_active;
  reg [ADDR_W-1:0] w_addr;
  reg [7:0] w_len;
  reg [1:0] w_burst;
  assign s_axi_awready = !w_active && !s_axi_bvalid && !hold_a;
  assign s_axi_wready = w_active && !hold_d;
  assign s_axi_bresp = 2'b00;
  integer i;
  always @(posedge clk) begin
    if (!rst_n) begin
      w_active <= 0;
      s_axi_bvalid <= 0;
    end else begin
      if (s_axi_awvalid && s_axi_awready) begin
        w_active <= 1;
        w_addr <= s_axi_awaddr;
        w_len <= s_axi_awlen;
        w_burst <= s_axi_awburst;
        s_axi_bid <= s_axi_awid;
      end
      if (s_axi_wvalid && s_axi_wready) begin
        for (i = 0; i < NB; i = i + 1)
          if (s_axi_wstrb[i]) mem[w_addr[ADDR_W-1:LB]][i*8+:8] <= s_axi_wdata[i*8+:8];
        w_addr <= next_addr(w_addr, w_len, w_burst);
        if (s_axi_wlast) begin
          w_active <= 0;
          s_axi_bvalid <= 1;
        end
      end
      if (s_axi_bvalid && s_axi_bready) s_axi_bvalid <= 0;
    end
  end

  // Reads.
  generate
    if (BUG == 3) begin : fatal_on_read
      always @(posedge clk) if (rst_n && s_axi_arvalid) $fatal(1, "axi_mem: reads refused (BUG=3)");
    end
  endgenerate
  reg r_active;
  reg [ADDR_W-1:0] r_addr;
  reg [7:0] r_len, r_beat;
  reg [1:0] r_burst;
  reg [ID_W-1:0] r_id;
  assign s_axi_arready = !r_active && !hold_a;
  assign s_axi_rdata = mem[r_addr[ADDR_W-1:LB]];
  assign s_axi_rresp = 2'b00;
  assign s_axi_rlast = BUG == 1 ? 1'b1 : r_beat == r_len;
  assign s_axi_rid = BUG == 2 ? r_id + 1 : r_id;
  always @(posedge clk) begin
    if (!rst_n) begin
      r_active <= 0;
      s_axi_rvalid <= 0;
    end else if (s_axi_arvalid && s_axi_arready) begin
      r_active <= 1;
      r_addr <= s_axi_araddr;
      r_len <= s_axi_arlen;
      r_burst <= s_axi_arburst;
      r_id <= s_axi_arid;
      r_beat <= 0;
    end else if (s_axi_rvalid && s_axi_rready) begin
      r_addr <= next_addr(r_addr, r_len, r_burst);
      r_beat <= r_beat + 1;
      s_axi_rvalid <= 0;
      if (r_beat == r_len) r_active <= 0;
      else s_axi_rvalid <= !hold_d;
    end else if (r_active && !s_axi_rvalid) s_axi_rvalid <= !hold_d;
  end
endmodule
