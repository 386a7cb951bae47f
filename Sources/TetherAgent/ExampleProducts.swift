public import TetherCore

/// Product models built into Tether, so that demos run without any file.
public enum ExampleProducts {
    /// The Gizwits "My WeChat Pet House SOC" product (`products/pet-house.json`, the worked
    /// example of the GAgent LAN reference): an LED with colour and RGB, a motor, an infrared
    /// sensor, temperature and humidity, two alerts and four faults.
    public static let petHouseJSON = #"""
        {"name":"My WeChat Pet House SOC","packetVersion":"0x00000004","protocolType":"standard","product_key":"de9e8d18d9394cce9081b25a531e552b","entities":[{"attrs":[
        {"name":"LED_OnOff","data_type":"bool","position":{"byte_offset":0,"unit":"bit","len":1,"bit_offset":0},"type":"status_writable","id":0},
        {"name":"LED_Color","data_type":"enum","enum":["Customize","Yellow","Purple","Pink"],"position":{"byte_offset":0,"unit":"bit","len":2,"bit_offset":1},"type":"status_writable","id":1},
        {"name":"LED_R","data_type":"uint8","position":{"byte_offset":1,"unit":"byte","len":1,"bit_offset":0},"uint_spec":{"addition":0,"max":254,"ratio":1,"min":0},"type":"status_writable","id":2},
        {"name":"LED_G","data_type":"uint8","position":{"byte_offset":2,"unit":"byte","len":1,"bit_offset":0},"uint_spec":{"addition":0,"max":254,"ratio":1,"min":0},"type":"status_writable","id":3},
        {"name":"LED_B","data_type":"uint8","position":{"byte_offset":3,"unit":"byte","len":1,"bit_offset":0},"uint_spec":{"addition":0,"max":254,"ratio":1,"min":0},"type":"status_writable","id":4},
        {"name":"Motor_Speed","data_type":"uint8","position":{"byte_offset":4,"unit":"byte","len":1,"bit_offset":0},"uint_spec":{"addition":-5,"max":10,"ratio":1,"min":0},"type":"status_writable","id":5},
        {"name":"Infrared","data_type":"bool","position":{"byte_offset":5,"unit":"bit","len":1,"bit_offset":0},"type":"status_readonly","id":6},
        {"name":"Temperature","data_type":"uint8","position":{"byte_offset":6,"unit":"byte","len":1,"bit_offset":0},"uint_spec":{"addition":-13,"max":200,"ratio":1,"min":0},"type":"status_readonly","id":7},
        {"name":"Humidity","data_type":"uint8","position":{"byte_offset":7,"unit":"byte","len":1,"bit_offset":0},"uint_spec":{"addition":0,"max":100,"ratio":1,"min":0},"type":"status_readonly","id":8},
        {"name":"Alert_1","data_type":"bool","position":{"byte_offset":8,"unit":"bit","len":1,"bit_offset":0},"type":"alert","id":9},
        {"name":"Alert_2","data_type":"bool","position":{"byte_offset":8,"unit":"bit","len":1,"bit_offset":1},"type":"alert","id":10},
        {"name":"Fault_LED","data_type":"bool","position":{"byte_offset":9,"unit":"bit","len":1,"bit_offset":0},"type":"fault","id":11},
        {"name":"Fault_Motor","data_type":"bool","position":{"byte_offset":9,"unit":"bit","len":1,"bit_offset":1},"type":"fault","id":12},
        {"name":"Fault_TemHum","data_type":"bool","position":{"byte_offset":9,"unit":"bit","len":1,"bit_offset":2},"type":"fault","id":13},
        {"name":"Fault_IR","data_type":"bool","position":{"byte_offset":9,"unit":"bit","len":1,"bit_offset":3},"type":"fault","id":14}],"name":"entity0","id":0}]}
        """#

    /// ``petHouseJSON`` read as a model (read again on every access).
    public static var petHouse: ThingModel {
        // The document is part of the source and tested; it always reads.
        try! ThingModel(gizwitsJSON: Array(petHouseJSON.utf8))
    }
}
