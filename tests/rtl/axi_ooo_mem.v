// SPDX-License-Identifier: MIT
// A test AXI4 slave memory of 2^ADDR_W bytes that exercises what a simple slave never does
// (INCR bursts of full-width beats, byte strobes):
// - reads out of order: up to SLOTS read bursts are taken; once the slots are full, or GATHER
//   cycles pass with no new address, the newest burst whose ID has no older one waiting is
//   answered first (AXI4 A5: order is kept per ID only); `reordered` counts the bursts answered
//   before an older one (a test reads it: the reordering really happened);
// - data before address: WREADY is high until a whole burst's beats (WLAST) are buffered, and
//   only then AWREADY (A3.3.1: a slave may wait for WVALID before AWREADY); a burst whose AWLEN
//   disagrees with the beats it sent stops the run ($fatal);
// - errors: a burst in the top 4 KiB is answered SLVERR, in the 4 KiB below it DECERR (writes
//   there change nothing).
module axi_ooo_mem #(
    parameter DATA_W = 32,
    parameter ADDR_W = 16,
    parameter ID_W = 4,
    parameter SLOTS = 4,
    parameter GATHER = 6
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
    output reg [1:0] s_axi_bresp,
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
    input s_axi_rready,
    output reg [15:0] reordered
);
  localparam NB = DATA_W / 8;
  localparam LB = $clog2(NB);
  localparam WORDS = (1 << ADDR_W) / NB;
  localparam SB = $clog2(SLOTS);

  reg [DATA_W-1:0] mem[0:WORDS-1];

  // SLVERR in the top 4 KiB, DECERR in the 4 KiB below, OKAY elsewhere.
  function [1:0] region_resp(input [ADDR_W-1:0] a);
    if (&a[ADDR_W-1:12]) region_resp = 2'b10;
    else if (a[ADDR_W-1:12] == {{(ADDR_W - 13) {1'b1}}, 1'b0}) region_resp = 2'b11;
    else region_resp = 2'b00;
  endfunction

  // a taken after b (sequence numbers wrap; fewer than 128 are ever outstanding).
  function newer(input [7:0] a, input [7:0] b);
    reg [7:0] d;
    begin
      d = a - b;
      newer = d != 0 && !d[7];
    end
  endfunction

  // Reads: the slots, the first free one, the burst to answer next.
  reg [SLOTS-1:0] s_valid;
  reg [ADDR_W-1:0] s_addr[0:SLOTS-1];
  reg [7:0] s_len[0:SLOTS-1];
  reg [ID_W-1:0] s_id[0:SLOTS-1];
  reg [7:0] s_seq[0:SLOTS-1];
  reg [7:0] seq, quiet;
  integer j, k;
  reg has_free, has_pick, blocked;
  reg [SB-1:0] free, pick;
  always @* begin
    has_free = 0;
    free = 0;
    for (k = SLOTS - 1; k >= 0; k = k - 1)
      if (!s_valid[k]) begin
        has_free = 1;
        free = k[SB-1:0];
      end
  end
  always @* begin
    has_pick = 0;
    pick = 0;
    for (k = 0; k < SLOTS; k = k + 1) begin
      blocked = 0;
      for (j = 0; j < SLOTS; j = j + 1)
        if (s_valid[j] && j != k && s_id[j] == s_id[k] && newer(s_seq[k], s_seq[j])) blocked = 1;
      if (s_valid[k] && !blocked && (!has_pick || newer(s_seq[k], s_seq[pick]))) begin
        has_pick = 1;
        pick = k[SB-1:0];
      end
    end
  end

  reg r_active;
  reg [SB-1:0] r_slot;
  reg [ADDR_W-1:0] r_addr;
  reg [7:0] r_beat;
  assign s_axi_arready = has_free;
  assign s_axi_rdata = mem[r_addr[ADDR_W-1:LB]];
  assign s_axi_rresp = region_resp(s_addr[r_slot]);
  assign s_axi_rid = s_id[r_slot];
  assign s_axi_rlast = r_beat == s_len[r_slot];
  wire start = has_pick && !r_active && (!has_free || quiet >= GATHER);
  reg older;
  always @* begin
    older = 0;
    for (k = 0; k < SLOTS; k = k + 1) if (s_valid[k] && newer(s_seq[pick], s_seq[k])) older = 1;
  end
  always @(posedge clk) begin
    if (!rst_n) begin
      s_valid <= 0;
      r_active <= 0;
      s_axi_rvalid <= 0;
      seq <= 0;
      quiet <= 0;
      reordered <= 0;
    end else begin
      if (s_axi_arvalid && s_axi_arready) begin
        s_valid[free] <= 1;
        s_addr[free] <= s_axi_araddr;
        s_len[free] <= s_axi_arlen;
        s_id[free] <= s_axi_arid;
        s_seq[free] <= seq;
        seq <= seq + 1;
        quiet <= 0;
      end else if (quiet != 8'hff) quiet <= quiet + 1;
      if (start) begin
        if (older) reordered <= reordered + 1;
        r_active <= 1;
        r_slot <= pick;
        r_addr <= s_addr[pick];
        r_beat <= 0;
        s_axi_rvalid <= 1;
      end else if (r_active && s_axi_rready) begin
        r_addr <= r_addr + NB;
        r_beat <= r_beat + 1;
        if (r_beat == s_len[r_slot]) begin
          r_active <= 0;
          s_axi_rvalid <= 0;
          s_valid[r_slot] <= 0;
        end
      end
    end
  end

  // Writes: a burst's beats buffered, then its address, then the beats into memory one a cycle.
  reg [DATA_W-1:0] wbuf[0:255];
  reg [NB-1:0] wstb[0:255];
  reg [8:0] w_count, d_idx;
  reg w_full, drain;
  reg [ADDR_W-1:0] d_addr;
  integer i;
  assign s_axi_wready = !w_full && !drain;
  assign s_axi_awready = w_full && !drain && !s_axi_bvalid;
  always @(posedge clk) begin
    if (!rst_n) begin
      w_count <= 0;
      w_full <= 0;
      drain <= 0;
      s_axi_bvalid <= 0;
    end else begin
      if (s_axi_wvalid && s_axi_wready) begin
        wbuf[w_count[7:0]] <= s_axi_wdata;
        wstb[w_count[7:0]] <= s_axi_wstrb;
        w_count <= w_count + 1;
        if (s_axi_wlast) w_full <= 1;
      end
      if (s_axi_awvalid && s_axi_awready) begin
        if ({1'b0, s_axi_awlen} + 9'd1 != w_count)
          $fatal(1, "axi_ooo_mem: AWLEN %0d, but %0d beats came with WLAST", s_axi_awlen, w_count);
        drain <= 1;
        d_idx <= 0;
        d_addr <= s_axi_awaddr;
        s_axi_bid <= s_axi_awid;
        s_axi_bresp <= region_resp(s_axi_awaddr);
      end
      if (drain) begin
        if (s_axi_bresp == 2'b00)
          for (i = 0; i < NB; i = i + 1)
            if (wstb[d_idx[7:0]][i]) mem[d_addr[ADDR_W-1:LB]][i*8+:8] <= wbuf[d_idx[7:0]][i*8+:8];
        d_addr <= d_addr + NB;
        d_idx <= d_idx + 1;
        if (d_idx + 1 == w_count) begin
          drain <= 0;
          w_full <= 0;
          w_count <= 0;
          s_axi_bvalid <= 1;
        end
      end
      if (s_axi_bvalid && s_axi_bready) s_axi_bvalid <= 0;
    end
  end
endmodule
