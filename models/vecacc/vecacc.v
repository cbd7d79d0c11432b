// SPDX-License-Identifier: MIT
// vecacc: the worked example of RTL co-simulation (docs/rtl-cosim.md), and the twin of the TLM
// model in vecacc.cpp. An engine programmed through AXI4-Lite registers whose AXI4 master reads
// two int32 vectors from memory and writes their element-wise sum, or a scaled copy of the first.
//
// Registers (32-bit, byte offsets):
//   0x00 CTRL    bit 0: start (write 1; ignored while busy), bit 1: interrupt enable
//   0x04 STATUS  bit 0: busy, bit 1: done (write 1 to clear; clears the interrupt),
//                bit 2: error (a bus error response, or an address not aligned to the bus)
//   0x08 SRC_A_LO  0x0c SRC_A_HI  0x10 SRC_B_LO  0x14 SRC_B_HI  0x18 DST_LO  0x1c DST_HI
//   0x20 COUNT   elements
//   0x24 OP      0: dst = a + b, 1: dst = a * SCALE (both wrap at 32 bits)
//   0x28 SCALE
//   0x2c CYCLES  clock cycles the last operation took
//   0x30 ID      0x7ecacc01
// Work goes in chunks of at most MAX_BEATS beats that never cross 4 KiB: read A, read B (add
// only), write the result (strobes on the tail), wait for the write response, next chunk.
module vecacc #(
    parameter DATA_W = 128,
    parameter MAX_BEATS = 16,
    parameter ID_W = 2,
    parameter BUG = 0  // 1: WLAST on the first beat; 2: bursts ignore 4 KiB (checker tests)
) (
    input clk,
    input rst_n,
    output irq,
    output busy,
    input [7:0] s_axi_awaddr,
    input s_axi_awvalid,
    output s_axi_awready,
    input [31:0] s_axi_wdata,
    input [3:0] s_axi_wstrb,
    input s_axi_wvalid,
    output s_axi_wready,
    output [1:0] s_axi_bresp,
    output reg s_axi_bvalid,
    input s_axi_bready,
    input [7:0] s_axi_araddr,
    input s_axi_arvalid,
    output s_axi_arready,
    output reg [31:0] s_axi_rdata,
    output [1:0] s_axi_rresp,
    output reg s_axi_rvalid,
    input s_axi_rready,
    output [ID_W-1:0] m_axi_awid,
    output reg [63:0] m_axi_awaddr,
    output reg [7:0] m_axi_awlen,
    output [2:0] m_axi_awsize,
    output [1:0] m_axi_awburst,
    output reg m_axi_awvalid,
    input m_axi_awready,
    output [DATA_W-1:0] m_axi_wdata,
    output [DATA_W/8-1:0] m_axi_wstrb,
    output m_axi_wlast,
    output reg m_axi_wvalid,
    input m_axi_wready,
    input [ID_W-1:0] m_axi_bid,
    input [1:0] m_axi_bresp,
    input m_axi_bvalid,
    output m_axi_bready,
    output [ID_W-1:0] m_axi_arid,
    output reg [63:0] m_axi_araddr,
    output reg [7:0] m_axi_arlen,
    output [2:0] m_axi_arsize,
    output [1:0] m_axi_arburst,
    output reg m_axi_arvalid,
    input m_axi_arready,
    input [ID_W-1:0] m_axi_rid,
    input [DATA_W-1:0] m_axi_rdata,
    input [1:0] m_axi_rresp,
    input m_axi_rlast,
    input m_axi_rvalid,
    output m_axi_rready
);
  localparam NB = DATA_W / 8;
  localparam LB = $clog2(NB);
  localparam EPB = DATA_W / 32;  // elements per beat
  localparam LE = $clog2(EPB);

  // ---- registers ----
  reg [63:0] src_a, src_b, dst;
  reg [31:0] count, op, scale, cycles;
  reg irq_en, done, error;
  reg [3:0] state;
  localparam IDLE = 0, AR_A = 1, R_A = 2, AR_B = 3, R_B = 4, AW = 5, W = 6, B = 7;
  assign busy = state != IDLE;
  assign irq = done && irq_en;

  // AXI4-Lite: a write is taken when its address and data are both valid.
  wire reg_write = s_axi_awvalid && s_axi_wvalid && !s_axi_bvalid;
  assign s_axi_awready = reg_write;
  assign s_axi_wready = reg_write;
  assign s_axi_bresp = 2'b00;
  assign s_axi_arready = !s_axi_rvalid;
  assign s_axi_rresp = 2'b00;
  wire start = reg_write && s_axi_awaddr[7:2] == 6'h00 && s_axi_wdata[0] && state == IDLE;

  function [31:0] read_reg(input [5:0] w);
    case (w)
      6'h00: read_reg = {30'b0, irq_en, 1'b0};
      6'h01: read_reg = {29'b0, error, done, busy};
      6'h02: read_reg = src_a[31:0];
      6'h03: read_reg = src_a[63:32];
      6'h04: read_reg = src_b[31:0];
      6'h05: read_reg = src_b[63:32];
      6'h06: read_reg = dst[31:0];
      6'h07: read_reg = dst[63:32];
      6'h08: read_reg = count;
      6'h09: read_reg = op;
      6'h0a: read_reg = scale;
      6'h0b: read_reg = cycles;
      6'h0c: read_reg = 32'h7ecacc01;
      default: read_reg = 32'h0;
    endcase
  endfunction

  always @(posedge clk) begin
    if (!rst_n) begin
      s_axi_bvalid <= 0;
      s_axi_rvalid <= 0;
      irq_en <= 0;
      src_a <= 0;
      src_b <= 0;
      dst <= 0;
      count <= 0;
      op <= 0;
      scale <= 0;
    end else begin
      if (reg_write) begin
        s_axi_bvalid <= 1;
        case (s_axi_awaddr[7:2])
          6'h00: irq_en <= s_axi_wdata[1];
          6'h02: src_a[31:0] <= s_axi_wdata;
          6'h03: src_a[63:32] <= s_axi_wdata;
          6'h04: src_b[31:0] <= s_axi_wdata;
          6'h05: src_b[63:32] <= s_axi_wdata;
          6'h06: dst[31:0] <= s_axi_wdata;
          6'h07: dst[63:32] <= s_axi_wdata;
          6'h08: count <= s_axi_wdata;
          6'h09: op <= s_axi_wdata;
          6'h0a: scale <= s_axi_wdata;
          default: ;
        endcase
      end
      if (s_axi_bvalid && s_axi_bready) s_axi_bvalid <= 0;
      if (s_axi_arvalid && s_axi_arready) begin
        s_axi_rvalid <= 1;
        s_axi_rdata <= read_reg(s_axi_araddr[7:2]);
      end
      if (s_axi_rvalid && s_axi_rready) s_axi_rvalid <= 0;
    end
  end

  // ---- the engine ----
  reg [63:0] a, b, d;   // this chunk's addresses
  reg [31:0] left;      // elements not yet written
  reg [8:0] beats, k;   // this chunk's beats, the beat being moved
  reg [DATA_W-1:0] buf_a[0:MAX_BEATS-1];
  reg [DATA_W-1:0] buf_b[0:MAX_BEATS-1];

  function [12:0] page_beats(input [63:0] x);
    page_beats = (13'd4096 - {1'b0, x[11:0]}) >> LB;
  endfunction
  wire [31:0] need = (left + EPB - 1) >> LE;
  wire [31:0] lim0 = need < MAX_BEATS ? need : MAX_BEATS;
  wire [12:0] pa = page_beats(a), pb = page_beats(b), pd = page_beats(d);
  wire [12:0] pab = pa < pb ? pa : pb;
  wire [12:0] pg = pab < pd ? pab : pd;
  wire [31:0] chunk = BUG == 2 ? lim0 : (lim0 < {19'b0, pg} ? lim0 : {19'b0, pg});
  wire adding = op == 0;

  assign m_axi_arid = 0;
  assign m_axi_awid = 0;
  assign m_axi_arsize = LB[2:0];
  assign m_axi_awsize = LB[2:0];
  assign m_axi_arburst = 2'b01;
  assign m_axi_awburst = 2'b01;
  assign m_axi_rready = state == R_A || state == R_B;
  assign m_axi_bready = state == B;
  assign m_axi_wlast = BUG == 1 ? k == 0 : k + 1 == beats;

  // The result beat k: per 32-bit lane, a + b or a * scale; strobes only on elements < left.
  genvar g;
  generate
    for (g = 0; g < EPB; g = g + 1) begin : lane
      wire [31:0] ea = buf_a[k[7:0]][g*32+:32], eb = buf_b[k[7:0]][g*32+:32];
      assign m_axi_wdata[g*32+:32] = adding ? ea + eb : ea * scale;
      assign m_axi_wstrb[g*4+:4] = {4{({23'b0, k} << LE) + g < left}};
    end
  endgenerate

  wire bad_align = src_a[LB-1:0] != 0 || src_b[LB-1:0] != 0 || dst[LB-1:0] != 0;

  always @(posedge clk) begin
    if (!rst_n) begin
      state <= IDLE;
      m_axi_arvalid <= 0;
      m_axi_awvalid <= 0;
      m_axi_wvalid <= 0;
      done <= 0;
      error <= 0;
      cycles <= 0;
    end else begin
      if (reg_write && s_axi_awaddr[7:2] == 6'h01 && s_axi_wdata[1]) done <= 0;
      if (busy) cycles <= cycles + 1;
      case (state)
        IDLE:
        if (start) begin
          a <= src_a;
          b <= src_b;
          d <= dst;
          left <= count;
          cycles <= 0;
          done <= 0;
          error <= bad_align;
          if (bad_align || count == 0) done <= 1;
          else state <= AR_A;
        end
        AR_A: begin
          beats <= chunk[8:0];
          m_axi_araddr <= a;
          m_axi_arlen <= chunk[7:0] - 1;
          m_axi_arvalid <= 1;
          k <= 0;
          if (m_axi_arvalid && m_axi_arready) begin
            m_axi_arvalid <= 0;
            state <= R_A;
          end
        end
        R_A:
        if (m_axi_rvalid) begin
          buf_a[k[7:0]] <= m_axi_rdata;
          if (m_axi_rresp[1]) error <= 1;
          k <= k + 1;
          if (m_axi_rlast) begin
            k <= 0;
            state <= adding ? AR_B : AW;
          end
        end
        AR_B: begin
          m_axi_araddr <= b;
          m_axi_arvalid <= 1;
          if (m_axi_arvalid && m_axi_arready) begin
            m_axi_arvalid <= 0;
            state <= R_B;
          end
        end
        R_B:
        if (m_axi_rvalid) begin
          buf_b[k[7:0]] <= m_axi_rdata;
          if (m_axi_rresp[1]) error <= 1;
          k <= k + 1;
          if (m_axi_rlast) begin
            k <= 0;
            state <= AW;
          end
        end
        AW: begin
          m_axi_awaddr <= d;
          m_axi_awlen <= beats[7:0] - 1;
          m_axi_awvalid <= 1;
          if (m_axi_awvalid && m_axi_awready) begin
            m_axi_awvalid <= 0;
            m_axi_wvalid <= 1;
            state <= W;
          end
        end
        W:
        if (m_axi_wvalid && m_axi_wready) begin
          k <= k + 1;
          if (m_axi_wlast) begin
            m_axi_wvalid <= 0;
            state <= B;
          end
        end
        B:
        if (m_axi_bvalid) begin
          if (m_axi_bresp[1]) error <= 1;
          a <= a + ({55'b0, beats} << LB);
          b <= b + ({55'b0, beats} << LB);
          d <= d + ({55'b0, beats} << LB);
          if (left <= ({23'b0, beats} << LE) || m_axi_bresp[1]) begin
            left <= 0;
            done <= 1;
            state <= IDLE;
          end else begin
            left <= left - ({23'b0, beats} << LE);
            state <= AR_A;
          end
        end
        default: state <= IDLE;
      endcase
    end
  end
endmodule
